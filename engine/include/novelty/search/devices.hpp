// What the build and the machine offer: CUDA compiled in or not, and the devices present.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace novelty {

/// One CUDA device as the runtime reports it.
struct DeviceInfo {
    int index = 0;
    std::string name;
    int compute_major = 0;
    int compute_minor = 0;
    int multiprocessors = 0;
    std::size_t total_memory_bytes = 0;
    std::size_t free_memory_bytes = 0;
};

/// True when this build includes the CUDA backend.
bool cuda_compiled();
/// The CUDA architectures compiled in (as given to CMake, e.g. "90-real;90-virtual"); empty in
/// a CPU-only build.
std::string cuda_architectures();
/// CUDA runtime and driver versions as "13.0 / 13.0"; empty in a CPU-only build. When the
/// driver is missing the text says so instead of throwing.
std::string cuda_versions();
/// The devices present; empty in a CPU-only build or on a machine without a usable device.
/// Never throws for a missing driver or device: that is an empty list.
std::vector<DeviceInfo> list_devices();

}  // namespace novelty
