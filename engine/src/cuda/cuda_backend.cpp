// The CUDA backend (novelty/backends.hpp): cuBLAS similarity tiles, RAFT top-k per tile, a
// running merge per query on the device, and the shared rules of search_rules.hpp on the host.
//
// Per batch of queries: the queries go to the device in the storage type; their row limits and
// exclusions go as small arrays. For each query tile and corpus tile: one GEMM (on its own
// stream, a tile ahead) fills a tile of float32 similarities, a mask kernel sets rows past the
// limit, the query's own row (self-join) and excluded rows to -inf; the first corpus tile of a
// query tile is reduced by select_k, later ones by a filter that keeps only entries at or above
// the query's running k-th best; a second select_k merges them into the running best k held in
// the batch's candidate matrix (batch x (k + filter capacity)). A batch whose filter overflowed
// is redone with select_k on every tile. Corpus tiles past every limit in a query tile are
// skipped. The corpus is resident on the device when it fits the memory budget; otherwise it
// is streamed in two alternating chunk buffers, the next chunk's upload overlapping the current
// chunk's work. With NOVELTY_CUDA_PROFILE=<file>, each call appends its time per phase there
// (cuda/phase_profile.hpp).
#include "novelty/backends.hpp"
#include "novelty/error.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "candidate_dots.cuh"
#include "convert_values.cuh"
#include "cuda/device_memory.hpp"
#include "cuda/phase_profile.hpp"
#include "cuda/row_upload.hpp"
#include "cuda/similarity_gemm.hpp"
#include "cpu/parallel_for.hpp"
#include "device_memory_plan.hpp"
#include "filter_above.cuh"
#include "place_columns.cuh"
#include "search_rules.hpp"
#include "select_k.cuh"
#include "tile_mask.cuh"

namespace novelty {

namespace {

using kernels::Element;

constexpr std::size_t pairs_per_pass = std::size_t{1} << 24;

Element element_of(DeviceStorage storage) {
    switch (storage) {
        case DeviceStorage::f16: return Element::f16;
        case DeviceStorage::bf16: return Element::bf16;
        case DeviceStorage::f32: return Element::f32;
    }
    throw Error("unknown device storage");
}

/// What to search with: float32 vectors from the host (search), or corpus rows (self-join:
/// query i is corpus row i).
struct QuerySource {
    const float* host_vectors = nullptr;  ///< null: the queries are corpus rows
    std::size_t n_queries = 0;
};

/// Device and pinned buffers a backend keeps between calls.
struct Workspace {
    cuda::DeviceBuffer sims[2], tile_vals, tile_idx, best_vals, best_idx, cand_vals, cand_idx, query_rows, limits, begins,
        overflow, query_f32, rerank_idx, rerank_sims;
    cuda::PinnedBuffer host_vals, host_idx;

    static void ensure(cuda::DeviceBuffer& buffer, std::size_t bytes) {
        if (buffer.bytes() >= bytes) return;
        buffer = cuda::DeviceBuffer();  // free first: the old and new buffer need not coexist
        buffer = cuda::DeviceBuffer(bytes);
    }
    static void ensure_pinned(cuda::PinnedBuffer& buffer, std::size_t bytes) {
        if (buffer.bytes() >= bytes) return;
        buffer = cuda::PinnedBuffer();
        buffer = cuda::PinnedBuffer(bytes);
    }
};

/// Orders each of n queries' running best (the first k of `width` columns of vals/idx) into
/// `result` rows first.. by the shared merge rule, on all cores.
void finish_rows(const float* vals, const std::int64_t* idx, std::size_t width, std::size_t k, std::size_t n,
                 TopK& result, std::size_t first) {
    constexpr std::size_t per_block = 256;
    parallel_for_blocks((n + per_block - 1) / per_block, 0, [&](std::size_t block) {
        for (std::size_t i = block * per_block; i < std::min(n, (block + 1) * per_block); ++i)
            result.count[first + i] = best_of(vals + i * width, idx + i * width, k, k,
                                              result.rows.data() + (first + i) * k,
                                              result.sims.data() + (first + i) * k);
    });
}

class CudaSearchIndex final : public SearchIndex {
public:
    CudaSearchIndex(const CudaBackendOptions& options, const VectorView& corpus)
        : SearchIndex(corpus), storage_(element_of(options.storage)), storage_option_(options.storage),
          device_(options.device) {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
            cudaGetLastError();
            throw Error("the CUDA backend needs a CUDA device, but none is available");
        }
        if (options.device < 0 || options.device >= count)
            throw UsageError("CUDA device " + std::to_string(options.device) + " does not exist (" +
                             std::to_string(count) + " found)");
        cuda::DeviceScope scope(device_);
        std::size_t free_bytes = 0, total_bytes = 0;
        NOVELTY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        budget_ = split_device_budget(options.memory_budget ? options.memory_budget : free_bytes / 10 * 9);
        stream_ = std::make_unique<cuda::Stream>();
        copy_stream_ = std::make_unique<cuda::Stream>();
        // GEMMs run on their own stream, one tile ahead of the selection (two similarity
        // buffers), unless NOVELTY_CUDA_OVERLAP=0 (a benchmark knob) puts them on one stream.
        const char* overlap = std::getenv("NOVELTY_CUDA_OVERLAP");
        overlap_ = overlap == nullptr || std::string(overlap) != "0";
        if (overlap_) gemm_stream_ = std::make_unique<cuda::Stream>();
        cublas_ = std::make_unique<cuda::Cublas>();
        select_ = std::make_unique<kernels::SelectK>(budget_.select_workspace);
        uploader_ = std::make_unique<cuda::RowUploader>(storage_, budget_.staging);
        if (storage_ != Element::f32)
            f32_uploader_ = std::make_unique<cuda::RowUploader>(Element::f32, budget_.staging);
    }

    std::string name() const override { return "cuda"; }
    std::string label() const override { return "cuda-" + storage_name(storage_option_); }

protected:
    TopK search_impl(const SearchQueries& queries, std::size_t k) override {
        cuda::DeviceScope scope(device_);
        return run(corpus(), corpus().n_rows, QuerySource{queries.vectors, queries.n_queries}, k, queries.row_begin,
                   queries.row_limit, sorted_exclusions(queries), {});
    }

    SelfJoin self_join_impl(std::size_t n_rows, std::size_t q, std::size_t k_stored,
                            const ProgressFn& progress) override {
        cuda::DeviceScope scope(device_);
        TopK top = run(corpus(), n_rows, QuerySource{nullptr, n_rows}, k_stored, {}, {}, {}, progress);
        return self_join_from(std::move(top), n_rows, q);
    }

    TopK search_candidates_impl(const SearchQueries& queries, const RowLists& candidates, std::size_t k) override;

private:
    std::size_t sims_buffers() const { return overlap_ ? 2 : 1; }

    DeviceSearchShape shape_of(const VectorView& corpus, std::size_t n_rows, std::size_t n_queries,
                               std::size_t k) const {
        DeviceSearchShape shape;
        shape.n_queries = n_queries;
        shape.n_rows = n_rows;
        shape.corpus_rows = corpus.n_rows;
        shape.dim = corpus.dim;
        shape.k = k;
        shape.storage_bytes = static_cast<std::size_t>(element_bytes(storage_));
        shape.sims_buffers = sims_buffers();
        return shape;
    }

    /// The resident copy of the index's corpus (all its rows), uploaded by the first call that
    /// has room for it and kept for every later one; null when it does not fit in `room` bytes
    /// (a call that needs the room for its work buffers drops it, and the corpus is streamed).
    const void* resident(std::size_t room) {
        const VectorView& rows = corpus();
        const std::size_t bytes = rows.n_rows * rows.dim * element_bytes(storage_);
        if (resident_rows_.bytes() > 0 && bytes <= room) return resident_rows_.get();
        resident_rows_ = cuda::DeviceBuffer();
        if (bytes > room) return nullptr;
        resident_rows_ = cuda::DeviceBuffer(bytes);
        uploader_->upload(rows, 0, rows.n_rows, resident_rows_.get(), stream_->get());
        stream_->synchronize();
        profile_.add_count("corpus_uploads");
        return resident_rows_.get();
    }

    TopK run(const VectorView& corpus, std::size_t n_rows, const QuerySource& source, std::size_t k,
             const std::vector<std::size_t>& row_begin, const std::vector<std::size_t>& row_limit, const std::vector<std::vector<std::int64_t>>& excluded,
             const ProgressFn& progress);

    /// `found` (each query's rows, from the device) with similarities recomputed on the host
    /// from the float32 queries and the stored rows, ordered by the merge rule.
    TopK rescore_on_host(const QuerySource& source, const TopK& found);

    Element storage_;
    DeviceStorage storage_option_;
    int device_;
    DeviceBudget budget_;
    std::unique_ptr<cuda::Stream> stream_;
    std::unique_ptr<cuda::Stream> copy_stream_;
    std::unique_ptr<cuda::Stream> gemm_stream_;
    bool overlap_ = true;
    Workspace workspace_;
    std::unique_ptr<cuda::Cublas> cublas_;
    std::unique_ptr<kernels::SelectK> select_;
    std::unique_ptr<cuda::RowUploader> uploader_;
    std::unique_ptr<cuda::RowUploader> f32_uploader_;  ///< float32 queries, for the final re-scoring
    cuda::PhaseProfile profile_;  ///< NOVELTY_CUDA_PROFILE: time per phase of each call
    std::unique_ptr<SearchIndex> host_scorer_;  ///< a CPU index on the same rows, for rescore_on_host
    cuda::DeviceBuffer resident_rows_;
};

template <typename T>
void copy_to_device(const std::vector<T>& values, const cuda::DeviceBuffer& buffer, cudaStream_t stream) {
    if (!values.empty())
        NOVELTY_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), values.data(), values.size() * sizeof(T),
                                           cudaMemcpyHostToDevice, stream));
}

TopK CudaSearchIndex::run(const VectorView& corpus, std::size_t n_rows, const QuerySource& source, std::size_t k,
                          const std::vector<std::size_t>& row_begin, const std::vector<std::size_t>& row_limit,
                            const std::vector<std::vector<std::int64_t>>& excluded, const ProgressFn& progress) {
    const std::size_t n_queries = source.n_queries;
    const std::size_t dim = corpus.dim;
    const std::size_t row_bytes = dim * element_bytes(storage_);
    const bool self = source.host_vectors == nullptr;
    const cudaStream_t stream = stream_->get();

    const auto call_start = std::chrono::steady_clock::now();
    cuda::PhaseProfile& profile = profile_;
    profile.start_call();
    TopK result;
    result.n_queries = n_queries;
    result.k = k;
    // The result's arrays (12 bytes per neighbour, 60 MB for 50k x 100) are filled in while the
    // device works on the first batch, not before its work is queued.
    const auto allocate_result = [&] {
        if (result.count.size() != n_queries) result = empty_top_k(n_queries, k);
    };
    if (n_queries == 0) return result;

    const DeviceSearchShape shape = shape_of(corpus, n_rows, n_queries, k);
    const DeviceMemoryPlan memory = plan_device_memory(budget_, shape, tuning);
    const DeviceTilePlan& plan = memory.tiles;
    const cudaStream_t gemm_stream = overlap_ ? gemm_stream_->get() : stream;
    VectorView searched = corpus;
    searched.n_rows = n_rows;
    auto phase_start = std::chrono::steady_clock::now();
    const void* corpus_rows = resident(memory.room);
    profile.add_host("resident_corpus", cuda::seconds_since(phase_start));
    // Streaming: two chunk buffers share the room left beside the work buffers.
    std::size_t chunk_rows = n_rows;
    cuda::DeviceBuffer chunk_buffers[2];
    if (corpus_rows == nullptr) {
        chunk_rows = memory.chunk_rows;
        if (!memory.streaming_fits)
            throw UsageError("the CUDA backend's memory budget (" + std::to_string(budget_.total >> 20) +
                             " MiB) is too small for its work buffers plus two corpus chunks: give --device-memory " +
                             std::to_string(smallest_feasible_budget_mib(shape, tuning)) +
                             " or more, or use --device cpu");
        chunk_buffers[0] = cuda::DeviceBuffer(chunk_rows * row_bytes);
        chunk_buffers[1] = cuda::DeviceBuffer(chunk_rows * row_bytes);
    }
    const std::size_t n_chunks = (n_rows + chunk_rows - 1) / chunk_rows;

    // Each query's candidates: [running best k | one tile's entries (capacity slots)].
    const std::size_t qt = plan.query_tile, ct = plan.corpus_tile, batch = plan.query_batch;
    const std::size_t capacity = filter_capacity(k), width = k + capacity;
    const auto i64 = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    // Work buffers are kept between calls and grown when a call needs more.
    Workspace& w = workspace_;
    w.ensure(w.sims[0], qt * ct * sizeof(float));
    if (overlap_) w.ensure(w.sims[1], qt * ct * sizeof(float));
    w.ensure(w.tile_vals, qt * k * sizeof(float));
    w.ensure(w.tile_idx, qt * k * sizeof(std::int64_t));
    w.ensure(w.best_vals, qt * k * sizeof(float));
    w.ensure(w.best_idx, qt * k * sizeof(std::int64_t));
    w.ensure(w.cand_vals, batch * width * sizeof(float));
    w.ensure(w.cand_idx, batch * width * sizeof(std::int64_t));
    if (!(self && corpus_rows != nullptr)) w.ensure(w.query_rows, batch * row_bytes);
    w.ensure(w.limits, batch * sizeof(std::int64_t));
    w.ensure(w.begins, batch * sizeof(std::int64_t));
    w.ensure(w.overflow, sizeof(int));
    // With 16-bit storage the queries are rounded for the GEMMs; the final k of each query are
    // re-scored with the float32 query against the stored rows, so the similarities reported
    // are those of the CPU backend on the same stored vectors (up to summation order). Here on
    // the device when the corpus is resident; for a streamed corpus, on the host at the end.
    const bool rescore = !self && storage_ != Element::f32 && corpus_rows != nullptr;
    if (rescore) {
        w.ensure(w.query_f32, batch * dim * sizeof(float));
        w.ensure(w.rerank_idx, batch * k * sizeof(std::int64_t));
        w.ensure(w.rerank_sims, batch * k * sizeof(float));
    }
    w.ensure_pinned(w.host_vals, batch * k * sizeof(float));
    w.ensure_pinned(w.host_idx, batch * k * sizeof(std::int64_t));
    cuda::DeviceBuffer* sims_buffer = w.sims;
    cuda::DeviceBuffer &tile_vals = w.tile_vals, &tile_idx = w.tile_idx, &best_vals = w.best_vals,
                       &best_idx = w.best_idx, &cand_vals = w.cand_vals, &cand_idx = w.cand_idx,
                       &query_rows = w.query_rows, &limits_d = w.limits, &overflow_d = w.overflow;
    cuda::DeviceBuffer excluded_offsets_d, excluded_rows_d;
    auto* host_vals = static_cast<float*>(w.host_vals.get());
    auto* host_idx = static_cast<std::int64_t*>(w.host_idx.get());
    cuda::Event uploaded[2], consumed[2];
    bool consumed_recorded[2] = {false, false};
    // Tile t uses similarity buffer t % 2: the GEMM of tile t waits until the selection of
    // tile t - 2 has read that buffer; the selection of tile t waits for its GEMM.
    cuda::Event gemm_done[2], sims_read[2], queries_ready;
    std::size_t tile_number = 0;

    const std::size_t total_steps = ((n_queries + batch - 1) / batch) * n_chunks;
    for (std::size_t b0 = 0; b0 < n_queries; b0 += batch) {
        const std::size_t nb = std::min(batch, n_queries - b0);
        // Queries on the device, in the storage type.
        const unsigned char* queries_d = nullptr;
        profile.add_count("batches");
        phase_start = std::chrono::steady_clock::now();
        const int queries_span = profile.begin(stream);
        if (!self && rescore) {
            f32_uploader_->upload(VectorView{source.host_vectors, DType::f32, n_queries, dim}, b0, nb,
                                  w.query_f32.get(), stream);
            kernels::launch_convert_values(w.query_f32.get(), Element::f32, query_rows.get(), storage_, nb * dim, stream);
            queries_d = query_rows.as<unsigned char>();
        } else if (!self) {
            uploader_->upload(VectorView{source.host_vectors, DType::f32, n_queries, dim}, b0, nb, query_rows.get(), stream);
            queries_d = query_rows.as<unsigned char>();
        } else if (corpus_rows != nullptr) {
            queries_d = static_cast<const unsigned char*>(corpus_rows) + b0 * row_bytes;
        } else {
            uploader_->upload(corpus, b0, nb, query_rows.get(), stream);
            queries_d = query_rows.as<unsigned char>();
        }
        profile.end(queries_span, "queries_in", stream);
        profile.add_host("queries_in", cuda::seconds_since(phase_start));
        // Row limits and exclusions of the batch.
        std::vector<std::int64_t> limits(nb), begins(nb, 0);
        std::size_t batch_limit = 0;
        for (std::size_t i = 0; i < nb; ++i) {
            const std::size_t limit = self ? n_rows : searchable_rows(row_limit, b0 + i, n_rows);
            limits[i] = i64(limit);
            begins[i] = self ? 0 : i64(std::min(first_searchable_row(row_begin, b0 + i), limit));
            batch_limit = std::max(batch_limit, limit);
        }
        copy_to_device(limits, limits_d, stream);
        const bool has_begins = !row_begin.empty();
        if (has_begins) copy_to_device(begins, w.begins, stream);
        bool has_exclusions = false;
        if (!excluded.empty()) {
            std::vector<std::int64_t> offsets(nb + 1, 0), rows;
            for (std::size_t i = 0; i < nb; ++i) {
                rows.insert(rows.end(), excluded[b0 + i].begin(), excluded[b0 + i].end());
                offsets[i + 1] = i64(rows.size());
            }
            has_exclusions = !rows.empty();
            if (has_exclusions) {
                excluded_offsets_d = cuda::DeviceBuffer(offsets.size() * sizeof(std::int64_t));
                excluded_rows_d = cuda::DeviceBuffer(rows.size() * sizeof(std::int64_t));
                copy_to_device(offsets, excluded_offsets_d, stream);
                copy_to_device(rows, excluded_rows_d, stream);
                // The host vectors must outlive the asynchronous copies.
                stream_->synchronize();
            }
        }
        queries_ready.record(stream);
        if (overlap_) queries_ready.wait_on(gemm_stream);
        const std::size_t chunks_needed = (batch_limit + chunk_rows - 1) / chunk_rows;

        // The batch runs with the threshold filter; in the rare case that a tile had more
        // qualifying entries than the filter holds, it runs again with a full selection of
        // every tile.
        for (const bool filtering : {true, false}) {
            // Empty candidates: every slot -inf / -1; no overflow yet.
            kernels::launch_place_columns(nullptr, nullptr, i64(nb), 0, cand_vals.as<float>(),
                                          cand_idx.as<std::int64_t>(), i64(width), 0, i64(width), 0, stream);
            NOVELTY_CUDA_CHECK(cudaMemsetAsync(overflow_d.get(), 0, sizeof(int), stream));
            std::vector<bool> tile_started((nb + qt - 1) / qt, false);

            auto upload_chunk = [&](std::size_t chunk) {
                const int slot = static_cast<int>(chunk % 2);
                if (consumed_recorded[slot]) consumed[slot].wait_on(copy_stream_->get());
                const std::size_t first = chunk * chunk_rows;
                const int chunk_span = profile.begin(copy_stream_->get());
                uploader_->upload(searched, first, std::min(chunk_rows, n_rows - first), chunk_buffers[slot].get(),
                                  copy_stream_->get());
                profile.end(chunk_span, "chunk_upload", copy_stream_->get());
                uploaded[slot].record(copy_stream_->get());
            };
            if (corpus_rows == nullptr && chunks_needed > 0) upload_chunk(0);
            std::size_t steps_done = (b0 / batch) * n_chunks;
            for (std::size_t chunk = 0; chunk < chunks_needed; ++chunk) {
                const std::size_t c_first = chunk * chunk_rows;
                const std::size_t c_rows = std::min(chunk_rows, n_rows - c_first);
                const unsigned char* chunk_d = nullptr;
                const int slot = static_cast<int>(chunk % 2);
                if (corpus_rows != nullptr) {
                    chunk_d = static_cast<const unsigned char*>(corpus_rows) + c_first * row_bytes;
                } else {
                    uploaded[slot].wait_on(stream);
                    if (overlap_) uploaded[slot].wait_on(gemm_stream);
                    chunk_d = chunk_buffers[slot].as<unsigned char>();
                    if (chunk + 1 < chunks_needed) upload_chunk(chunk + 1);
                }
                for (std::size_t q0 = 0; q0 < nb; q0 += qt) {
                    const std::size_t nq = std::min(qt, nb - q0);
                    std::int64_t tile_max = 0, tile_min = std::numeric_limits<std::int64_t>::max();
                    std::int64_t begin_max = 0;
                    for (std::size_t i = q0; i < q0 + nq; ++i) {
                        tile_max = std::max(tile_max, limits[i]);
                        tile_min = std::min(tile_min, limits[i]);
                        begin_max = std::max(begin_max, begins[i]);
                    }
                    float* cand_v = cand_vals.as<float>() + q0 * width;
                    std::int64_t* cand_i = cand_idx.as<std::int64_t>() + q0 * width;
                    for (std::size_t c0 = c_first; c0 < c_first + c_rows; c0 += ct) {
                        if (i64(c0) >= tile_max) break;
                        const std::size_t nc = std::min(ct, c_first + c_rows - c0);
                        const int parity = overlap_ ? static_cast<int>(tile_number++ % 2) : 0;
                        float* sims = sims_buffer[parity].as<float>();
                        if (overlap_) sims_read[parity].wait_on(gemm_stream);
                        profile.add_count("tiles");
                        const int gemm_span = profile.begin(gemm_stream);
                        cuda::similarity_gemm(*cublas_, gemm_stream, storage_, queries_d + q0 * row_bytes, i64(nq),
                                              chunk_d + (c0 - c_first) * row_bytes, i64(nc), i64(dim), sims, i64(nc));
                        profile.end(gemm_span, "gemm", gemm_stream);
                        if (overlap_) {
                            gemm_done[parity].record(gemm_stream);
                            gemm_done[parity].wait_on(stream);
                        }
                        kernels::TileMask mask;
                        bool needs_mask = false;
                        if (tile_min < i64(c0 + nc)) {
                            mask.row_limit = limits_d.as<std::int64_t>() + q0;
                            needs_mask = true;
                        }
                        if (has_begins && begin_max > i64(c0)) {
                            mask.row_begin = w.begins.as<std::int64_t>() + q0;
                            needs_mask = true;
                        }
                        mask.first_col = i64(c0);
                        if (self && b0 + q0 < c0 + nc && c0 < b0 + q0 + nq) {
                            mask.self_row0 = i64(b0 + q0);
                            needs_mask = true;
                        }
                        if (has_exclusions) {
                            mask.excluded_offsets = excluded_offsets_d.as<std::int64_t>() + q0;
                            mask.excluded_rows = excluded_rows_d.as<std::int64_t>();
                            needs_mask = true;
                        }
                        if (needs_mask) {
                            const int mask_span = profile.begin(stream);
                            kernels::launch_mask_tile(sims, i64(nq), i64(nc), i64(nc), mask, stream);
                            profile.end(mask_span, "mask", stream);
                        }
                        // The first tile of a query tile fills the running best with a full
                        // selection; later ones pass the threshold filter when it is on.
                        const std::size_t tile_index = q0 / qt;
                        const int select_span = profile.begin(stream);
                        if (filtering && tile_started[tile_index]) {
                            kernels::launch_filter_above(sims, i64(nq), i64(nc), cand_v, cand_i, i64(width), i64(k),
                                                         i64(capacity), i64(c0), overflow_d.as<int>(), stream);
                            if (overlap_) sims_read[parity].record(stream);
                            profile.end(select_span, "filter", stream);
                        } else {
                            profile.add_count("full_selections");
                            const std::size_t kk = std::min(k, nc);
                            select_->largest(sims, nullptr, i64(nq), i64(nc), i64(kk), tile_vals.as<float>(),
                                             tile_idx.as<std::int64_t>(), stream);
                            if (overlap_) sims_read[parity].record(stream);
                            kernels::launch_place_columns(tile_vals.as<float>(), tile_idx.as<std::int64_t>(), i64(nq),
                                                          i64(kk), cand_v, cand_i, i64(width), i64(k), i64(capacity),
                                                          i64(c0), stream);
                            profile.end(select_span, "select_full", stream);
                        }
                        tile_started[tile_index] = true;
                        const int merge_span = profile.begin(stream);
                        select_->largest(cand_v, cand_i, i64(nq), i64(width), i64(k), best_vals.as<float>(),
                                         best_idx.as<std::int64_t>(), stream);
                        kernels::launch_place_columns(best_vals.as<float>(), best_idx.as<std::int64_t>(), i64(nq),
                                                      i64(k), cand_v, cand_i, i64(width), 0, i64(k), 0, stream);
                        profile.end(merge_span, "merge", stream);
                    }
                }
                if (corpus_rows == nullptr) {
                    consumed[slot].record(stream);
                    consumed_recorded[slot] = true;
                }
                if (progress) progress(++steps_done, total_steps);
            }
            int overflow = 0;
            const int out_span = profile.begin(stream);
            NOVELTY_CUDA_CHECK(cudaMemcpyAsync(&overflow, overflow_d.get(), sizeof(int), cudaMemcpyDeviceToHost, stream));
            // Only the running best (the first k columns) comes back, into pinned memory.
            NOVELTY_CUDA_CHECK(cudaMemcpy2DAsync(host_idx, k * sizeof(std::int64_t), cand_idx.get(),
                                                 width * sizeof(std::int64_t), k * sizeof(std::int64_t), nb,
                                                 cudaMemcpyDeviceToHost, stream));
            if (rescore) {
                NOVELTY_CUDA_CHECK(cudaMemcpy2DAsync(w.rerank_idx.get(), k * sizeof(std::int64_t), cand_idx.get(),
                                                     width * sizeof(std::int64_t), k * sizeof(std::int64_t), nb,
                                                     cudaMemcpyDeviceToDevice, stream));
                const int rescore_span = profile.begin(stream);
                kernels::launch_candidate_dots(w.query_f32.as<float>(), corpus_rows, storage_, i64(dim), nullptr,
                                               w.rerank_idx.as<std::int64_t>(), i64(nb * k),
                                               w.rerank_sims.as<float>(), stream, i64(k));
                profile.end(rescore_span, "rescore", stream);
                NOVELTY_CUDA_CHECK(cudaMemcpyAsync(host_vals, w.rerank_sims.get(), nb * k * sizeof(float),
                                                   cudaMemcpyDeviceToHost, stream));
            } else {
                NOVELTY_CUDA_CHECK(cudaMemcpy2DAsync(host_vals, k * sizeof(float), cand_vals.get(),
                                                     width * sizeof(float), k * sizeof(float), nb,
                                                     cudaMemcpyDeviceToHost, stream));
            }
            profile.end(out_span, "results_out", stream);
            phase_start = std::chrono::steady_clock::now();
            allocate_result();
            profile.add_host("allocate_result", cuda::seconds_since(phase_start));
            phase_start = std::chrono::steady_clock::now();
            stream_->synchronize();
            profile.add_host("wait_for_device", cuda::seconds_since(phase_start));
            if (overflow == 0) break;
            profile.add_count("overflow_redos");
        }
        // The merge rule on the host: the running best k, re-sorted with ties by lower row.
        phase_start = std::chrono::steady_clock::now();
        finish_rows(host_vals, host_idx, k, k, nb, result, b0);
        profile.add_host("host_order", cuda::seconds_since(phase_start));
        if (progress) progress(((b0 + nb + batch - 1) / batch) * n_chunks, total_steps);
    }
    if (!self && storage_ != Element::f32 && corpus_rows == nullptr) {
        // A streamed corpus is not on the device when the results are known, so the final k
        // are re-scored with the float32 queries on the host, by the CPU backend's candidate
        // scoring (its similarities, its order) over the rows found.
        phase_start = std::chrono::steady_clock::now();
        result = rescore_on_host(source, result);
        profile.add_host("rescore_on_host", cuda::seconds_since(phase_start));
    }
    if (profile.enabled()) {
        profile.add_host("call", cuda::seconds_since(call_start));
        profile.finish_call("\"queries\": " + std::to_string(n_queries) + ", \"rows\": " + std::to_string(n_rows) +
                            ", \"k\": " + std::to_string(k) + ", \"self_join\": " + (self ? "true" : "false") +
                            ", \"resident\": " + (corpus_rows != nullptr ? "true" : "false"));
    }
    return result;
}

TopK CudaSearchIndex::rescore_on_host(const QuerySource& source, const TopK& found) {
    RowLists rows;
    for (std::size_t i = 0; i < found.n_queries; ++i)
        rows.add(std::vector<std::int64_t>(found.rows.begin() + i * found.k,
                                           found.rows.begin() + i * found.k + found.count[i]));
    SearchQueries queries;
    queries.vectors = source.host_vectors;
    queries.n_queries = source.n_queries;
    queries.dim = corpus().dim;
    if (!host_scorer_) host_scorer_ = make_cpu_backend()->build(corpus());
    return host_scorer_->search_candidates(queries, rows, found.k);
}

TopK CudaSearchIndex::search_candidates_impl(const SearchQueries& queries, const RowLists& candidates,
                                             std::size_t k) {
    cuda::DeviceScope scope(device_);
    const VectorView& corpus = this->corpus();
    const std::size_t dim = corpus.dim;
    const auto excluded = sorted_exclusions(queries);
    TopK result = empty_top_k(queries.n_queries, k);
    std::vector<std::vector<std::int64_t>> lists(queries.n_queries);
    std::size_t n_pairs = 0;
    for (std::size_t i = 0; i < queries.n_queries; ++i) {
        lists[i] = candidate_rows(candidates, i, first_searchable_row(queries.row_begin, i),
                                  searchable_rows(queries.row_limit, i, corpus.n_rows),
                                  excluded.empty() ? nullptr : &excluded[i]);
        n_pairs += lists[i].size();
    }
    if (n_pairs == 0) return result;

    const cudaStream_t stream = stream_->get();
    const std::size_t row_bytes = dim * element_bytes(storage_);
    const void* corpus_rows =
        resident(budget_.total > (std::size_t{1} << 30) ? budget_.total - (std::size_t{1} << 30) : 0);
    cuda::DeviceBuffer queries_d(queries.n_queries * dim * sizeof(float));
    NOVELTY_CUDA_CHECK(cudaMemcpyAsync(queries_d.get(), queries.vectors, queries.n_queries * dim * sizeof(float),
                                       cudaMemcpyHostToDevice, stream));
    // Pairs go in passes of bounded size; without a resident corpus each pass gathers the rows
    // it needs on the host and uploads them.
    std::size_t query = 0;
    while (query < queries.n_queries) {
        std::vector<std::int32_t> pair_query;
        std::vector<std::int64_t> pair_row;
        std::vector<std::size_t> first_query_pair;
        const std::size_t pass_first = query;
        while (query < queries.n_queries && (pair_row.empty() || pair_row.size() + lists[query].size() <= pairs_per_pass)) {
            first_query_pair.push_back(pair_row.size());
            for (std::int64_t row : lists[query]) {
                pair_query.push_back(static_cast<std::int32_t>(query));
                pair_row.push_back(row);
            }
            ++query;
        }
        first_query_pair.push_back(pair_row.size());
        std::vector<std::int64_t> device_row = pair_row;
        cuda::DeviceBuffer gathered;
        const void* rows_d = corpus_rows;
        if (rows_d == nullptr) {
            std::vector<std::int64_t> unique_rows = pair_row;
            std::sort(unique_rows.begin(), unique_rows.end());
            unique_rows.erase(std::unique(unique_rows.begin(), unique_rows.end()), unique_rows.end());
            const std::size_t source_row_bytes = dim * (corpus.dtype == DType::f32 ? 4 : 2);
            std::vector<unsigned char> packed(unique_rows.size() * source_row_bytes);
            for (std::size_t u = 0; u < unique_rows.size(); ++u)
                std::memcpy(packed.data() + u * source_row_bytes,
                            static_cast<const unsigned char*>(corpus.data) + unique_rows[u] * source_row_bytes,
                            source_row_bytes);
            for (auto& row : device_row)
                row = std::lower_bound(unique_rows.begin(), unique_rows.end(), row) - unique_rows.begin();
            gathered = cuda::DeviceBuffer(unique_rows.size() * row_bytes);
            uploader_->upload(VectorView{packed.data(), corpus.dtype, unique_rows.size(), dim}, 0, unique_rows.size(),
                              gathered.get(), stream);
            rows_d = gathered.get();
        }
        cuda::DeviceBuffer pair_query_d(pair_query.size() * sizeof(std::int32_t));
        cuda::DeviceBuffer pair_row_d(device_row.size() * sizeof(std::int64_t));
        cuda::DeviceBuffer sims_d(pair_row.size() * sizeof(float));
        copy_to_device(pair_query, pair_query_d, stream);
        copy_to_device(device_row, pair_row_d, stream);
        kernels::launch_candidate_dots(queries_d.as<float>(), rows_d, storage_, static_cast<std::int64_t>(dim),
                                       pair_query_d.as<std::int32_t>(), pair_row_d.as<std::int64_t>(),
                                       static_cast<std::int64_t>(pair_row.size()), sims_d.as<float>(), stream);
        std::vector<float> sims(pair_row.size());
        NOVELTY_CUDA_CHECK(cudaMemcpyAsync(sims.data(), sims_d.get(), sims.size() * sizeof(float),
                                           cudaMemcpyDeviceToHost, stream));
        stream_->synchronize();
        for (std::size_t i = pass_first; i < query; ++i) {
            const std::size_t first = first_query_pair[i - pass_first];
            const std::size_t n = first_query_pair[i - pass_first + 1] - first;
            result.count[i] = best_of(sims.data() + first, pair_row.data() + first, n, k, result.rows.data() + i * k,
                                      result.sims.data() + i * k);
        }
    }
    return result;
}

/// The CUDA backend: its options; each index it builds holds its own device state.
class CudaSearchBackend final : public SearchBackend {
public:
    explicit CudaSearchBackend(const CudaBackendOptions& options) : options_(options) {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
            cudaGetLastError();
            throw Error("the CUDA backend needs a CUDA device, but none is available");
        }
        if (options.device < 0 || options.device >= count)
            throw UsageError("CUDA device " + std::to_string(options.device) + " does not exist (" +
                             std::to_string(count) + " found)");
    }
    std::string name() const override { return "cuda"; }
    std::string label() const override { return "cuda-" + storage_name(options_.storage); }

protected:
    std::unique_ptr<SearchIndex> build_impl(const VectorView& corpus) const override {
        return std::make_unique<CudaSearchIndex>(options_, corpus);
    }

private:
    CudaBackendOptions options_;
};

}  // namespace

std::unique_ptr<SearchBackend> make_cuda_backend(const CudaBackendOptions& options) {
    return std::make_unique<CudaSearchBackend>(options);
}

}  // namespace novelty
