// devices.hpp for a CPU-only build: no CUDA compiled in, no devices but the emulated one when
// NOVELTY_DEVICE=cuda-emulated forces it (CMake compiles it only
// without CUDA; the CUDA build's implementation is engine/src/search/cuda/devices.cpp).
#include "novelty/search/devices.hpp"
#include "device/device.hpp"

namespace novelty {

bool cuda_compiled() { return false; }

std::string cuda_architectures() { return {}; }

std::string cuda_versions() { return {}; }

std::vector<DeviceInfo> list_devices() { return dev::emulation_forced() ? dev::emulated_device_list() : std::vector<DeviceInfo>{}; }

}  // namespace novelty
