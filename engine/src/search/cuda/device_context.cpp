#include "search/cuda/device_context.hpp"

#include "novelty/util/error.hpp"

#include <cstdlib>
#include <string>

namespace novelty::cuda {

void Workspace::ensure(DeviceBuffer& buffer, std::size_t bytes) {
    if (buffer.bytes() >= bytes) return;
    buffer = DeviceBuffer();
    buffer = DeviceBuffer(bytes);
}

void Workspace::ensure_pinned(PinnedBuffer& buffer, std::size_t bytes) {
    if (buffer.bytes() >= bytes) return;
    buffer = PinnedBuffer();
    buffer = PinnedBuffer(bytes);
}

DeviceContext::DeviceContext(const CudaBackendOptions& options)
    : storage(element_of(options.storage)), storage_option(options.storage), device(options.device) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        throw Error("the CUDA backend needs a CUDA device, but none is available");
    }
    if (options.device < 0 || options.device >= count)
        throw UsageError("CUDA device " + std::to_string(options.device) + " does not exist (" + std::to_string(count) +
                         " found)");
    DeviceScope scope(device);
    std::size_t free_bytes = 0, total_bytes = 0;
    NOVELTY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    budget = split_device_budget(options.memory_budget ? options.memory_budget : free_bytes / 10 * 9);
    stream = std::make_unique<Stream>();
    copy_stream = std::make_unique<Stream>();
    const char* overlap_knob = std::getenv("NOVELTY_CUDA_OVERLAP");
    overlap = overlap_knob == nullptr || std::string(overlap_knob) != "0";
    if (overlap) gemm_stream = std::make_unique<Stream>();
    cublas = std::make_unique<Cublas>();
    select = std::make_unique<kernels::SelectK>(budget.select_workspace);
    uploader = std::make_unique<RowUploader>(storage, budget.staging);
    if (storage != kernels::Element::f32) f32_uploader = std::make_unique<RowUploader>(kernels::Element::f32, budget.staging);
}

const void* DeviceContext::resident(const VectorView& corpus, std::size_t room) {
    const std::size_t bytes = corpus.n_rows * corpus.dim * kernels::element_bytes(storage);
    if (resident_rows.bytes() > 0 && bytes <= room) return resident_rows.get();
    resident_rows = DeviceBuffer();
    if (bytes > room) return nullptr;
    resident_rows = DeviceBuffer(bytes);
    uploader->upload(corpus, 0, corpus.n_rows, resident_rows.get(), stream->get());
    stream->synchronize();
    profile.add_count("corpus_uploads");
    return resident_rows.get();
}

}  // namespace novelty::cuda
