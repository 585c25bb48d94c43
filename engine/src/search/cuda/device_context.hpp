// What a CUDA search index holds on its device between calls: the storage type and memory
// budget, its streams, cuBLAS and RAFT handles, row uploaders, the work buffers (grown when a
// call needs more), the resident corpus and the phase profile. Internal to engine/src/search/cuda.
#pragma once

#include <cstddef>
#include <memory>

#include "novelty/util/error.hpp"
#include "search/cuda/device_memory.hpp"
#include "search/cuda/phase_profile.hpp"
#include "search/cuda/row_upload.hpp"
#include "search/device_memory_plan.hpp"
#include "element_type.cuh"
#include "novelty/search/backends.hpp"

namespace novelty::cuda {

/// Device and pinned buffers kept between calls.
struct Workspace {
    DeviceBuffer sims[2], tile_vals, tile_idx, best_vals, best_idx, cand_vals, cand_idx, query_rows, limits, begins,
        overflow, query_f32, rerank_idx, rerank_sims, excluded_offsets, excluded_rows, filter_index, filter_words,
        chunks[2], row_norm;
    PinnedBuffer host_vals, host_idx, host_overflow, host_norm;

    explicit Workspace(Device& device) : device_(device) {}
    /// Grows `buffer` to at least `bytes` (freeing the old one first: both need not coexist).
    void ensure(DeviceBuffer& buffer, std::size_t bytes);
    void ensure_pinned(PinnedBuffer& buffer, std::size_t bytes);

private:
    Device& device_;
};

struct DeviceContext {
    /// Checks the device (UsageError for a bad index, Error without a device), splits the memory
    /// budget (options.memory_budget, or 90% of what is free) and makes the streams and handles.
    /// The device is the card, or the emulated one (options.emulated, NOVELTY_DEVICE).
    explicit DeviceContext(const CudaBackendOptions& options);

    /// The resident copy of `corpus` (all its rows), uploaded by the first call that has room
    /// for it and kept for every later one; null when it does not fit in `room` bytes (a call
    /// that needs the room for its work buffers drops it, and the corpus is streamed). Counts
    /// "corpus_uploads" in the profile when it uploads.
    const void* resident(const VectorView& corpus, std::size_t room);

    /// An upper bound on the largest norm of the resident rows (+inf when one is not finite);
    /// synchronises the stream.
    double max_norm_on_device(std::size_t n_rows, std::size_t dim);

    std::size_t sims_buffers() const { return overlap ? 2 : 1; }
    dev::Stream gemm_stream_or_main() const { return overlap ? gemm_stream->get() : stream->get(); }

    Device& dev;
    kernels::Element storage;
    DeviceStorage storage_option;
    int device = 0;
    DeviceBudget budget;
    std::unique_ptr<Stream> stream, copy_stream, gemm_stream;
    /// GEMMs run on their own stream, one tile ahead of the selection (two similarity buffers),
    /// unless NOVELTY_CUDA_OVERLAP=0 (a benchmark knob) puts them on one stream.
    bool overlap = true;
    /// 16-bit similarity tiles (CudaBackendOptions::similarity_tile, NOVELTY_CUDA_TILE).
    bool half_tile = false;
    /// The largest norm of a resident row (an upper bound; computed on the device when the
    /// resident copy is made with half_tile on); +inf when unknown.
    double resident_max_norm = 0;
    Workspace workspace{dev};
    std::unique_ptr<dev::Blas> blas;
    std::unique_ptr<dev::Selector> select;
    std::unique_ptr<RowUploader> uploader;
    std::unique_ptr<RowUploader> f32_uploader;  ///< float32 queries, for the final re-scoring
    PhaseProfile profile;                       ///< NOVELTY_CUDA_PROFILE: time per phase of each call
    DeviceBuffer resident_rows;
};

}  // namespace novelty::cuda
