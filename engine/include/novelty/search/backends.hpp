// Choosing a search backend: the CPU one (always there, the reference) or the CUDA one (when
// compiled in and a device is present). See novelty/search/search.hpp for the interface.
#pragma once

#include "novelty/search/search.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace novelty {

/// How the CUDA backend keeps the corpus on the device. 16-bit storage halves memory and
/// doubles matrix-unit speed; products are always summed in float32. float32 storage gives the
/// CPU backend's neighbours exactly (up to summation order).
/// The engine's one element type (novelty/util/element_type.hpp), under the name the CUDA
/// options use.
using DeviceStorage = ElementType;

/// "f16", "bf16", "f32" (element_name).
std::string storage_name(DeviceStorage storage);
/// Parses "f16" / "float16", "bf16" / "bfloat16", "f32" / "float32"; throws UsageError otherwise.
DeviceStorage parse_storage(const std::string& text);

struct CudaBackendOptions {
    int device = 0;                               ///< CUDA device index
    DeviceStorage storage = DeviceStorage::f16;   ///< how the corpus is held on the device
    /// Device memory the backend may use in bytes (corpus + work buffers); 0 = 90% of what is
    /// free when the backend is made. A corpus that does not fit beside the work buffers is
    /// streamed through the device in chunks on every call instead of staying resident.
    std::size_t memory_budget = 0;
    /// The element type of the similarity tiles the GEMM writes: f32 (the default) or f16 (half
    /// the tile's memory traffic; entries within a proven margin of each query's running k-th
    /// best are re-scored exactly with the float32 query before they are ranked, so the top k
    /// are those of the exact similarities; docs/cuda.md). f16 takes effect with f16 storage
    /// and a resident corpus; otherwise the tiles stay float32. The environment variable
    /// NOVELTY_CUDA_TILE=f32|f16, when set, overrides it. bf16 is refused (UsageError).
    DeviceStorage similarity_tile = DeviceStorage::f32;
    /// true: the emulated CUDA device (host memory, the CPU BLAS, each kernel's body in a host
    /// loop; docs/cuda.md) instead of a card: the backend's logic and its kernels' arithmetic
    /// tested without a GPU. Its index labels itself "cuda-emu-<storage>". Its memory is
    /// NOVELTY_EMULATED_DEVICE_MIB (default 16384), which memory_budget divides as on a card.
    bool emulated = false;
};

/// How the CPU index holds the corpus for its matrix products.
/// - f32 (default): sgemm on the caller's rows in place.
/// - bf16: a bf16 copy of the rows (2 bytes a value, half the memory and bandwidth of float32),
///   products screened in bf16 (AMX-BF16 tiles and AVX512-BF16's vdpbf16ps on the CPU paths that
///   have them, novelty/util/cpu_path.hpp; elsewhere sgemm on the widened rows).
/// - int8: an int8 copy of the rows (1 byte a value, each row quantized symmetrically with its
///   own scale), products screened in int8 against the queries quantized the same way (the
///   CPU path's int8 kernel: AMX, AVX512-VNNI, AVX-VNNI or AVX2, exact integer sums; on the f32
///   path sgemm on the dequantized values). Dimensions up to 65,536.
/// With bf16 and int8 every product is screened with a proven bound on its error, and every row
/// the bound cannot rule out of a query's top k is re-scored against the float32 rows with the
/// engine's fixed-order dot product. Similarities, order and ties are then the f32 index's bit for
/// bit (docs/search.md, "Narrow storage on the CPU"); the float32 rows are read only for those
/// candidates.
enum class CpuStorage { f32 = 0, bf16 = 1, int8 = 2 };

/// "f32", "bf16" or "int8".
const char* cpu_storage_name(CpuStorage storage);

struct CpuBackendOptions {
    CpuStorage storage = CpuStorage::f32;
    /// bf16 and int8 only: false screens with sgemm on rows widened back to float32 even where the
    /// CPU path has kernels for them (the f32 path's screen; for tests and comparison).
    bool screen_instructions = true;
};

/// "f32"/"float32", "bf16"/"bfloat16" or "int8" (the CLI's --storage, Python's storage= on the
/// CPU); anything else is a UsageError naming the field `field`.
CpuStorage parse_cpu_storage(const std::string& text, const std::string& field = "storage");

/// The CPU options every edge takes from its user: the storage by name (parse_cpu_storage) of the
/// CLI's --storage, the server's options and Python's storage=.
CpuBackendOptions cpu_options(const std::string& storage);

/// The CPU backend with `options`.
std::unique_ptr<SearchBackend> make_cpu_backend(const CpuBackendOptions& options);

/// The CUDA options every edge takes from its user: the storage by name (parse_storage) and the
/// memory budget in MiB (0 = 90% of free) of the CLI's --device-storage and --device-memory,
/// the server's options and Python's storage= and memory_mib=.
CudaBackendOptions cuda_options(const std::string& storage, std::size_t memory_mib);

/// The CUDA backend. Each index it builds uploads its corpus once (converted to `storage`) and
/// keeps it on the device for every later call; queries are float32 on the host and are
/// rounded to the storage type for the matrix products, and with 16-bit storage each query's
/// final k are re-scored with the float32 query (the reported similarities are then the CPU
/// backend's on the same stored rows, up to summation order). Results follow the interface's
/// ordering rules; among rows with exactly equal similarity at the k-th place the device may
/// keep a higher row than the CPU backend would.
/// Throws UsageError in a CPU-only build ("CUDA was not compiled in") and Error when the device
/// is missing or cannot be used.
std::unique_ptr<SearchBackend> make_cuda_backend(const CudaBackendOptions& options = {});

/// "auto" (CUDA when compiled in and a device is present, else CPU), "cpu", "cuda" (a clear
/// UsageError when CUDA is not compiled in or no device is present) or "cuda-emulated" (the CUDA
/// backend on the emulated device, in every build). With NOVELTY_DEVICE=cuda-emulated in the
/// environment every CUDA request gets the emulated device.
/// `cpu` applies when the choice is the CPU.
std::unique_ptr<SearchBackend> make_backend(const std::string& device, const CudaBackendOptions& options = {},
                                            const CpuBackendOptions& cpu = {});

/// The search backend a user chooses, by name, as every edge takes it: the CLI's --device,
/// --device-storage, --device-memory and --storage, the server's and the triage service's
/// options, Python's Index(device=, storage=, memory_mib=).
struct BackendChoice {
    std::string device = "auto";         ///< auto | cpu | cuda | cuda-emulated (make_backend)
    std::string device_storage = "f16";  ///< the CUDA backend's storage: f16 | bf16 | f32 (parse_storage)
    std::size_t device_memory_mib = 0;   ///< the CUDA backend's memory budget in MiB; 0 = 90% of free
    std::string storage = "f32";         ///< the CPU index's storage: f32 | bf16 | int8 (parse_cpu_storage)
};

/// The backend `choice` names: make_backend(device, cuda_options(device_storage,
/// device_memory_mib), cpu_options(storage)); UsageError for a name it does not know.
std::unique_ptr<SearchBackend> make_backend(const BackendChoice& choice);

/// What "auto" resolves to on this build and machine: "cuda" or "cpu".
std::string auto_device();

}  // namespace novelty
