// devices.hpp for a CUDA build: what the CUDA runtime reports. A machine without a driver or a
// device is a normal case here (the build machine has none), so nothing in this file throws
// for it: versions say "driver: not found" and the device list is empty.
#include "novelty/util/error.hpp"
#include "novelty/search/devices.hpp"
#include "device/device.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#ifndef NOVELTY_CUDA_ARCHS
#error "NOVELTY_CUDA_ARCHS must be defined by the build (see CMakeLists.txt)"
#endif

namespace novelty {

namespace {

/// CUDA encodes versions as 1000 * major + 10 * minor.
std::string version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

/// Fills the free and total memory of `device`, leaving zeros when the query fails. Restores
/// the caller's current device. cudaMemGetInfo initialises the device's primary context on
/// first use, so the first list_devices() call costs a moment per device.
void query_memory(int device, DeviceInfo& info) {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaSetDevice(device) == cudaSuccess &&
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        info.free_memory_bytes = free_bytes;
        info.total_memory_bytes = total_bytes;
    }
    if (previous >= 0) cudaSetDevice(previous);
    cudaGetLastError();  // a failed query is not an error for the caller's next CUDA call
}

}  // namespace

bool cuda_compiled() { return true; }

std::string cuda_architectures() { return NOVELTY_CUDA_ARCHS; }

std::string cuda_versions() {
    int runtime = 0;
    int driver = 0;
    std::string text = cudaRuntimeGetVersion(&runtime) == cudaSuccess
                           ? version_text(runtime)
                           : std::string("runtime: unknown");
    // cudaDriverGetVersion reports 0 (with success) when no driver is installed.
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
        text += " / " + version_text(driver);
    } else {
        text += " / driver: not found";
    }
    cudaGetLastError();
    return text;
}

std::vector<DeviceInfo> list_devices() {
    if (dev::emulation_forced()) return dev::emulated_device_list();
    std::vector<DeviceInfo> devices;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // no driver or no device: clear it, report an empty list
        return devices;
    }
    for (int index = 0; index < count; ++index) {
        cudaDeviceProp props{};
        if (cudaGetDeviceProperties(&props, index) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        DeviceInfo info;
        info.index = index;
        info.name = props.name;
        info.compute_major = props.major;
        info.compute_minor = props.minor;
        info.multiprocessors = props.multiProcessorCount;
        info.total_memory_bytes = props.totalGlobalMem;
        query_memory(index, info);
        devices.push_back(std::move(info));
    }
    return devices;
}

}  // namespace novelty
