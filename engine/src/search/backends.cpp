// Backend choice (novelty/search/backends.hpp).
#include "novelty/search/backends.hpp"

#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"
#include "device/device.hpp"

namespace novelty {

std::string storage_name(DeviceStorage storage) { return element_name(storage); }

DeviceStorage parse_storage(const std::string& text) {
    if (text == "f16" || text == "float16") return DeviceStorage::f16;
    if (text == "bf16" || text == "bfloat16") return DeviceStorage::bf16;
    if (text == "f32" || text == "float32") return DeviceStorage::f32;
    throw UsageError("device storage must be f16, bf16 or f32, not '" + text + "'", "device_storage");
}

CudaBackendOptions cuda_options(const std::string& storage, std::size_t memory_mib) {
    CudaBackendOptions options;
    options.storage = parse_storage(storage);
    options.memory_budget = memory_mib << 20;
    return options;
}

std::string auto_device() {
    return (cuda_compiled() || dev::emulation_forced()) && !list_devices().empty() ? "cuda" : "cpu";
}

const char* cpu_storage_name(CpuStorage storage) {
    switch (storage) {
        case CpuStorage::bf16: return "bf16";
        case CpuStorage::int8: return "int8";
        case CpuStorage::f32: break;
    }
    return "f32";
}

CpuStorage parse_cpu_storage(const std::string& text, const std::string& field) {
    if (text == "f32" || text == "float32") return CpuStorage::f32;
    if (text == "bf16" || text == "bfloat16") return CpuStorage::bf16;
    if (text == "int8") return CpuStorage::int8;
    throw UsageError("the CPU index's storage must be f32, bf16 or int8, not '" + text + "'", field);
}

CpuBackendOptions cpu_options(const std::string& storage) {
    CpuBackendOptions options;
    options.storage = parse_cpu_storage(storage);
    return options;
}

std::unique_ptr<SearchBackend> make_backend(const std::string& device, const CudaBackendOptions& options,
                                            const CpuBackendOptions& cpu) {
    if (device == "cpu") return make_cpu_backend(cpu);
    if (device == "auto") return auto_device() == "cuda" ? make_cuda_backend(options) : make_cpu_backend(cpu);
    if (device == "cuda-emulated") {
        CudaBackendOptions emulated = options;
        emulated.emulated = true;
        return make_cuda_backend(emulated);
    }
    if (device == "cuda") {
        if (!cuda_compiled() && !dev::emulation_forced())
            throw UsageError("device cuda: this build has no CUDA backend (CUDA was not compiled in; rebuild "
                             "with scripts/build.sh cuda on a machine with nvcc)",
                             "device");
        if (list_devices().empty())
            throw UsageError("device cuda: no CUDA device is available on this machine (" + cuda_versions() +
                                 "); use the cpu or auto device",
                             "device");
        return make_cuda_backend(options);
    }
    throw UsageError("device must be auto, cpu, cuda or cuda-emulated, not '" + device + "'", "device");
}

std::unique_ptr<SearchBackend> make_backend(const BackendChoice& choice) {
    return make_backend(choice.device, cuda_options(choice.device_storage, choice.device_memory_mib),
                        cpu_options(choice.storage));
}

}  // namespace novelty
