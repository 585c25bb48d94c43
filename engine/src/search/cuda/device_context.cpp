#include "search/cuda/device_context.hpp"

#include "novelty/util/error.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>


namespace novelty::cuda {

namespace {

/// CudaBackendOptions::similarity_tile, or NOVELTY_CUDA_TILE when set: true for f16.
bool half_tile_wanted(const CudaBackendOptions& options) {
    DeviceStorage tile = options.similarity_tile;
    if (const char* knob = std::getenv("NOVELTY_CUDA_TILE"); knob != nullptr && *knob != '\0') {
        const std::string text(knob);
        if (text != "f32" && text != "f16")
            throw UsageError("NOVELTY_CUDA_TILE must be f32 or f16, not '" + text + "'", "similarity_tile");
        tile = text == "f16" ? DeviceStorage::f16 : DeviceStorage::f32;
    }
    if (tile == DeviceStorage::bf16)
        throw UsageError("the similarity tile must be f32 or f16, not bf16", "similarity_tile");
    return tile == DeviceStorage::f16;
}

}  // namespace

void Workspace::ensure(DeviceBuffer& buffer, std::size_t bytes) {
    if (buffer.bytes() >= bytes) return;
    buffer = DeviceBuffer();
    buffer = DeviceBuffer(device_, bytes);
}

void Workspace::ensure_pinned(PinnedBuffer& buffer, std::size_t bytes) {
    if (buffer.bytes() >= bytes) return;
    buffer = PinnedBuffer();
    buffer = PinnedBuffer(device_, bytes);
}

DeviceContext::DeviceContext(const CudaBackendOptions& options)
    : dev(dev::select_device(options.emulated)), storage(element_of(options.storage)), storage_option(options.storage),
      device(options.device), profile(dev) {
    const int count = dev.count();
    if (count == 0) throw Error("the CUDA backend needs a CUDA device, but none is available");
    if (options.device < 0 || options.device >= count)
        throw UsageError("CUDA device " + std::to_string(options.device) + " does not exist (" + std::to_string(count) +
                         " found)");
    DeviceScope scope(dev, device);
    std::size_t free_bytes = 0, total_bytes = 0;
    dev.memory_info(free_bytes, total_bytes);
    budget = split_device_budget(options.memory_budget ? options.memory_budget : free_bytes / 10 * 9);
    stream = std::make_unique<Stream>(dev);
    copy_stream = std::make_unique<Stream>(dev);
    const char* overlap_knob = std::getenv("NOVELTY_CUDA_OVERLAP");
    overlap = overlap_knob == nullptr || std::string(overlap_knob) != "0";
    half_tile = half_tile_wanted(options);
    if (overlap) gemm_stream = std::make_unique<Stream>(dev);
    blas = dev.make_blas();
    select = dev.make_selector(budget.select_workspace);
    uploader = std::make_unique<RowUploader>(dev, storage, budget.staging);
    if (storage != kernels::Element::f32) f32_uploader = std::make_unique<RowUploader>(dev, kernels::Element::f32, budget.staging);
}

const void* DeviceContext::resident(const VectorView& corpus, std::size_t room) {
    const std::size_t bytes = corpus.n_rows * corpus.dim * kernels::element_bytes(storage);
    if (resident_rows.bytes() > 0 && bytes <= room) return resident_rows.get();
    resident_rows = DeviceBuffer();
    if (bytes > room) return nullptr;
    for (DeviceBuffer& chunk : workspace.chunks) chunk = DeviceBuffer();  // a streaming call's, kept for the next
    resident_rows = DeviceBuffer(dev, bytes);
    uploader->upload(corpus, 0, corpus.n_rows, resident_rows.get(), stream->get());
    resident_max_norm = half_tile ? max_norm_on_device(corpus.n_rows, corpus.dim) : 0;
    stream->synchronize();
    profile.add_count("corpus_uploads");
    return resident_rows.get();
}

double DeviceContext::max_norm_on_device(std::size_t n_rows, std::size_t dim) {
    workspace.ensure(workspace.row_norm, sizeof(float));
    workspace.ensure_pinned(workspace.host_norm, sizeof(float));
    dev.fill_bytes(workspace.row_norm.get(), 0, sizeof(float), stream->get());
    dev.max_row_norm(resident_rows.get(), storage, static_cast<std::int64_t>(n_rows), static_cast<std::int64_t>(dim),
                     workspace.row_norm.as<float>(), stream->get());
    dev.copy(workspace.host_norm.get(), workspace.row_norm.get(), sizeof(float), dev::Copy::device_to_host,
             stream->get());
    stream->synchronize();
    float norm = 0;
    std::memcpy(&norm, workspace.host_norm.get(), sizeof(float));
    if (!std::isfinite(norm)) return std::numeric_limits<double>::infinity();
    // The float32 sum of squares may be low by dim * 2^-24 relative (doubled for room); the
    // square root halves that.
    return double(norm) * (1.0 + static_cast<double>(dim) * std::ldexp(1.0, -23)) + std::ldexp(1.0, -60);
}

}  // namespace novelty::cuda
