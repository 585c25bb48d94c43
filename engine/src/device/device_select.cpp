// Which device a CUDA backend or encoder gets (device.hpp): the emulated one on request or when
// NOVELTY_DEVICE=cuda-emulated forces it, else the real one.
#include <cstdlib>
#include <string>

#include "device/device.hpp"
#include "device/emulated/emulated_device.hpp"
#include "novelty/util/error.hpp"

namespace novelty::dev {

namespace {

/// NOVELTY_EMULATED_DEVICE_MIB, or 16 GiB.
std::size_t emulated_memory_bytes() {
    const char* text = std::getenv("NOVELTY_EMULATED_DEVICE_MIB");
    if (text == nullptr || *text == '\0') return std::size_t{16} << 30;
    const std::string value(text);
    if (value.find_first_not_of("0123456789") != std::string::npos || value.size() > 9 || std::stoul(value) == 0)
        throw UsageError("NOVELTY_EMULATED_DEVICE_MIB must be a positive number of MiB, not '" + value + "'");
    return static_cast<std::size_t>(std::stoul(value)) << 20;
}

}  // namespace

Device& emulated_device() {
    static emulated::EmulatedDevice device(emulated_memory_bytes());
    return device;
}

bool emulation_forced() {
    const char* text = std::getenv("NOVELTY_DEVICE");
    if (text == nullptr || *text == '\0') return false;
    const std::string value(text);
    if (value != "cuda-emulated")
        throw UsageError("NOVELTY_DEVICE may only be set to cuda-emulated, not '" + value + "'");
    return true;
}

std::vector<DeviceInfo> emulated_device_list() {
    DeviceInfo info;
    info.index = 0;
    info.name = "cuda-emulated (host memory)";
    emulated_device().memory_info(info.free_memory_bytes, info.total_memory_bytes);
    return {info};
}

Device& select_device(bool emulated) { return emulated || emulation_forced() ? emulated_device() : cuda_device(); }

}  // namespace novelty::dev
