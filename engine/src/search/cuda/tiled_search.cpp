// The CUDA search pipeline (tiled_search.hpp). Per batch of queries: the queries go to the
// device in the storage type; their row ranges and exclusions go as small arrays. For each
// query tile and corpus tile: one GEMM (on its own stream, a tile ahead) fills a tile of float32
// similarities, a mask kernel sets rows outside the query's range, the query's own row
// (self-join) and excluded rows to -inf; the first corpus tile of a query tile is reduced by
// select_k, later ones by a filter that keeps only entries at or above the query's running k-th
// best; a second select_k merges them into the running best k held in the batch's candidate
// matrix (batch x (k + filter capacity)). A batch whose filter overflowed is redone with
// select_k on every tile. Corpus tiles past every limit in a query tile are skipped. A streamed
// corpus comes in two alternating chunk buffers, the next chunk's upload overlapping the
// current chunk's work.
#include "search/cuda/tiled_search.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "util/parallel_for.hpp"
#include "search/search_rules.hpp"
#include "search/tile_margin.hpp"

namespace novelty::cuda {

namespace {

using kernels::Element;

std::int64_t i64(std::size_t v) { return static_cast<std::int64_t>(v); }

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

/// One similarity tile: queries [q0, q0 + nq) of the batch against corpus rows [c0, c0 + nc),
/// which lie in the chunk starting at row c_first (device rows at chunk_d).
struct TileJob {
    std::size_t q0 = 0, nq = 0, c0 = 0, nc = 0, c_first = 0;
    const unsigned char* chunk_d = nullptr;
    std::int64_t tile_min = 0;   ///< the smallest row limit among the tile's queries
    std::int64_t begin_max = 0;  ///< the largest row begin among them
};

class TiledSearch {
public:
    TiledSearch(DeviceContext& ctx, const TiledSearchArgs& args)
        : ctx_(ctx), args_(args), corpus_(*args.corpus), n_queries_(args.n_queries), dim_(corpus_.dim),
          row_bytes_(dim_ * kernels::element_bytes(ctx.storage)), k_(args.k), self_(args.host_queries == nullptr),
          stream_(ctx.stream->get()), gemm_stream_(ctx.gemm_stream_or_main()) {}

    TopK run(bool& rescored_on_device);

private:
    // The device corpus.
    void place_corpus();
    const unsigned char* chunk_on_device(std::size_t chunk, std::size_t chunks_needed);
    void upload_chunk(std::size_t chunk);
    // The query batch.
    void grow_workspace();
    void plan_half_tiles();
    void queries_in(std::size_t b0, std::size_t nb);
    std::size_t ranges_in(std::size_t b0, std::size_t nb);
    void filters_in(std::size_t b0, std::size_t nb);
    // The tile selector.
    bool run_pass(std::size_t b0, std::size_t nb, std::size_t batch_limit, bool filtering);
    void search_chunk(std::size_t chunk, std::size_t chunks_needed, std::size_t b0, std::size_t nb, bool filtering,
                      std::vector<bool>& tile_started);
    void select_tile(const TileJob& job, std::size_t b0, bool filtering, std::vector<bool>& tile_started);
    void full_selection(const TileJob& job, const float* sims, int parity, bool fresh);
    kernels::FilterRescoreJob rescore_job(const TileJob& job, const void* sims, kernels::Element tile_type,
                                          float margin, bool fresh) const;
    void mask_tile(const TileJob& job, std::size_t b0, void* sims, bool half);
    // The finisher.
    int results_out(std::size_t nb, bool values_exact);

    DeviceContext& ctx_;
    const TiledSearchArgs& args_;
    const VectorView& corpus_;
    const std::size_t n_queries_, dim_, row_bytes_, k_;
    const bool self_;
    const dev::Stream stream_, gemm_stream_;

    const void* corpus_rows_ = nullptr;  ///< the resident rows; null when streamed
    std::size_t chunk_rows_ = 0, n_chunks_ = 0;
    Event uploaded_[2] = {Event(ctx_.dev), Event(ctx_.dev)}, consumed_[2] = {Event(ctx_.dev), Event(ctx_.dev)};
    bool consumed_recorded_[2] = {false, false};

    std::size_t qt_ = 0, ct_ = 0, batch_ = 0, capacity_ = 0, width_ = 0;
    bool rescore_ = false;
    // 16-bit similarity tiles (docs/cuda.md): the margins of float16 tiles and of a query tile's
    // first (float32) tile, and the batch's float32 queries for the exact re-scoring.
    bool half_ = false;
    float margin_half_ = 0, margin_fresh_ = 0;
    const float* queries_f32_d_ = nullptr;
    const unsigned char* queries_d_ = nullptr;
    std::vector<std::int64_t> limits_, begins_;
    bool has_begins_ = false, has_exclusions_ = false, has_filters_ = false;
    // Tile t uses similarity buffer t % 2: the GEMM of tile t waits until the selection of
    // tile t - 2 has read that buffer; the selection of tile t waits for its GEMM.
    Event gemm_done_[2] = {Event(ctx_.dev), Event(ctx_.dev)}, sims_read_[2] = {Event(ctx_.dev), Event(ctx_.dev)};
    Event queries_ready_{ctx_.dev};
    std::size_t tile_number_ = 0, total_steps_ = 0, steps_done_ = 0;
    TopK result_;
};

TopK TiledSearch::run(bool& rescored_on_device) {
    result_.n_queries = n_queries_;
    result_.k = k_;
    rescored_on_device = false;
    if (n_queries_ == 0) return result_;
    place_corpus();
    grow_workspace();
    total_steps_ = ((n_queries_ + batch_ - 1) / batch_) * n_chunks_;
    for (std::size_t b0 = 0; b0 < n_queries_; b0 += batch_) {
        const std::size_t nb = std::min(batch_, n_queries_ - b0);
        ctx_.profile.add_count("batches");
        queries_in(b0, nb);
        const std::size_t batch_limit = ranges_in(b0, nb);
        queries_ready_.record(stream_);
        if (ctx_.overlap) queries_ready_.wait_on(gemm_stream_);
        // The batch runs with the threshold filter; in the rare case that a tile had more
        // qualifying entries than the filter holds, it runs again with a full selection of
        // every tile.
        for (const bool filtering : {true, false}) {
            if (!run_pass(b0, nb, batch_limit, filtering)) break;
            ctx_.profile.add_count("overflow_redos");
        }
        {
            // The merge rule on the host: the running best k, re-sorted with ties by lower row.
            HostSpan order(ctx_.profile, "host_order");
            finish_rows(static_cast<float*>(ctx_.workspace.host_vals.get()),
                        static_cast<std::int64_t*>(ctx_.workspace.host_idx.get()), k_, k_, nb, result_, b0);
        }
        if (*args_.progress) (*args_.progress)(((b0 + nb + batch_ - 1) / batch_) * n_chunks_, total_steps_);
    }
    rescored_on_device = rescore_;
    return std::move(result_);
}

// --- the device corpus ---------------------------------------------------------------------

void TiledSearch::place_corpus() {
    DeviceSearchShape shape;
    shape.n_queries = n_queries_;
    shape.n_rows = args_.n_rows;
    shape.corpus_rows = corpus_.n_rows;
    shape.dim = dim_;
    shape.k = k_;
    shape.storage_bytes = static_cast<std::size_t>(kernels::element_bytes(ctx_.storage));
    shape.sims_buffers = ctx_.sims_buffers();
    const DeviceMemoryPlan memory = plan_device_memory(ctx_.budget, shape, *args_.tuning);
    qt_ = memory.tiles.query_tile;
    ct_ = memory.tiles.corpus_tile;
    batch_ = memory.tiles.query_batch;
    {
        HostSpan phase(ctx_.profile, "resident_corpus");
        corpus_rows_ = ctx_.resident(corpus_, memory.room);
    }
    // Streaming: two chunk buffers share the room left beside the work buffers.
    chunk_rows_ = args_.n_rows;
    if (corpus_rows_ == nullptr) {
        chunk_rows_ = memory.chunk_rows;
        if (!memory.streaming_fits)
            throw UsageError("the CUDA backend's memory budget (" + std::to_string(ctx_.budget.total >> 20) +
                             " MiB) is too small for its work buffers plus two corpus chunks: give it a budget of " +
                                 std::to_string(smallest_feasible_budget_mib(shape, *args_.tuning)) +
                                 " MiB or more, or use the cpu device",
                             "device_memory");
        // Kept between calls while their size stays the same (a server's repeated calls):
        // cudaFree waits for the whole device.
        for (DeviceBuffer& chunk : ctx_.workspace.chunks)
            if (chunk.bytes() != chunk_rows_ * row_bytes_) {
                chunk = DeviceBuffer();
                chunk = DeviceBuffer(ctx_.dev, chunk_rows_ * row_bytes_);
            }
    } else {
        for (DeviceBuffer& chunk : ctx_.workspace.chunks) chunk = DeviceBuffer();  // the plan has no room for them
    }
    n_chunks_ = (args_.n_rows + chunk_rows_ - 1) / chunk_rows_;
}

/// The device rows of `chunk`: the resident copy, or the chunk's buffer once its upload is
/// done (queuing the next chunk's upload behind it).
const unsigned char* TiledSearch::chunk_on_device(std::size_t chunk, std::size_t chunks_needed) {
    if (corpus_rows_ != nullptr) return static_cast<const unsigned char*>(corpus_rows_) + chunk * chunk_rows_ * row_bytes_;
    const int slot = static_cast<int>(chunk % 2);
    uploaded_[slot].wait_on(stream_);
    if (ctx_.overlap) uploaded_[slot].wait_on(gemm_stream_);
    if (chunk + 1 < chunks_needed) upload_chunk(chunk + 1);
    return ctx_.workspace.chunks[slot].as<unsigned char>();
}

void TiledSearch::upload_chunk(std::size_t chunk) {
    const int slot = static_cast<int>(chunk % 2);
    const dev::Stream copy = ctx_.copy_stream->get();
    if (consumed_recorded_[slot]) consumed_[slot].wait_on(copy);
    const std::size_t first = chunk * chunk_rows_;
    VectorView searched = corpus_;
    searched.n_rows = args_.n_rows;
    {
        DeviceSpan span(ctx_.profile, copy, "chunk_upload");
        ctx_.uploader->upload(searched, first, std::min(chunk_rows_, args_.n_rows - first),
                              ctx_.workspace.chunks[slot].get(), copy);
    }
    uploaded_[slot].record(copy);
}

// --- the query batch -----------------------------------------------------------------------

/// Work buffers are kept between calls and grown when a call needs more. With 16-bit storage
/// the queries are rounded for the GEMMs; the final k of each query are re-scored with the
/// float32 query against the stored rows, so the similarities reported are those of the CPU
/// backend on the same stored vectors (up to summation order): here on the device when the
/// corpus is resident; for a streamed corpus, by the caller on the host.
void TiledSearch::grow_workspace() {
    capacity_ = filter_capacity(k_);
    width_ = k_ + capacity_;  // each query's candidates: [running best k | one tile's entries]
    Workspace& w = ctx_.workspace;
    w.ensure(w.sims[0], qt_ * ct_ * sizeof(float));
    if (ctx_.overlap) w.ensure(w.sims[1], qt_ * ct_ * sizeof(float));
    w.ensure(w.tile_vals, qt_ * k_ * sizeof(float));
    w.ensure(w.tile_idx, qt_ * k_ * sizeof(std::int64_t));
    w.ensure(w.best_vals, qt_ * k_ * sizeof(float));
    w.ensure(w.best_idx, qt_ * k_ * sizeof(std::int64_t));
    w.ensure(w.cand_vals, batch_ * width_ * sizeof(float));
    w.ensure(w.cand_idx, batch_ * width_ * sizeof(std::int64_t));
    if (!(self_ && corpus_rows_ != nullptr)) w.ensure(w.query_rows, batch_ * row_bytes_);
    w.ensure(w.limits, batch_ * sizeof(std::int64_t));
    w.ensure(w.begins, batch_ * sizeof(std::int64_t));
    w.ensure(w.overflow, sizeof(int));
    // A self-join is re-scored like a search (its float32 queries: the caller's rows), so that
    // its neighbours' similarities are those a search of the same row reports: densities
    // from the self-join, from searches on demand and from sharded ranks are then the same bits.
    rescore_ = ctx_.storage != Element::f32 && corpus_rows_ != nullptr;
    plan_half_tiles();
    if (rescore_ || half_) w.ensure(w.query_f32, batch_ * dim_ * sizeof(float));
    if (rescore_) {
        w.ensure(w.rerank_idx, batch_ * k_ * sizeof(std::int64_t));
        w.ensure(w.rerank_sims, batch_ * k_ * sizeof(float));
    }
    w.ensure_pinned(w.host_vals, batch_ * k_ * sizeof(float));
    w.ensure_pinned(w.host_idx, batch_ * k_ * sizeof(std::int64_t));
    w.ensure_pinned(w.host_overflow, sizeof(int));
}

/// 16-bit tiles need float16 storage (cuBLAS writes float16 only from float16 inputs), the
/// resident corpus (the re-scoring reads any row) and finite margins (finite stored rows).
void TiledSearch::plan_half_tiles() {
    half_ = ctx_.half_tile && ctx_.storage == Element::f16 && corpus_rows_ != nullptr;
    if (!half_) return;
    TileMarginInputs in;
    in.dim = dim_;
    in.storage = ctx_.storage_option;
    in.max_row_norm = ctx_.resident_max_norm;
    // Search queries are unit vectors (normalised in double, rounded to float32); a self-join's
    // queries are stored rows.
    in.max_query_norm = std::max(ctx_.resident_max_norm, 1.0 + std::ldexp(1.0, -20));
    margin_half_ = similarity_tile_margin(in);
    in.half_tile = false;
    // A query tile's first tile: the k-th best of its float32 values is within the float32
    // margin of an exact value, and every entry that can reach the exact k-th best is within
    // that margin again (docs/cuda.md).
    margin_fresh_ = 2 * similarity_tile_margin(in);
    half_ = std::isfinite(margin_half_) && std::isfinite(margin_fresh_);
    ctx_.profile.add_count(half_ ? "half_tile_calls" : "half_tile_refused");
}

/// Queries [b0, b0 + nb) on the device, in the storage type.
void TiledSearch::queries_in(std::size_t b0, std::size_t nb) {
    Workspace& w = ctx_.workspace;
    HostSpan host(ctx_.profile, "queries_in");
    DeviceSpan span(ctx_.profile, stream_, "queries_in");
    const VectorView host_queries{args_.host_queries, DType::f32, n_queries_, dim_};
    if (!self_ && rescore_) {
        ctx_.f32_uploader->upload(host_queries, b0, nb, w.query_f32.get(), stream_);
        ctx_.dev.convert_values(w.query_f32.get(), Element::f32, w.query_rows.get(), ctx_.storage, nb * dim_,
                                       stream_);
        queries_d_ = w.query_rows.as<unsigned char>();
    } else if (!self_) {
        ctx_.uploader->upload(host_queries, b0, nb, w.query_rows.get(), stream_);
        queries_d_ = w.query_rows.as<unsigned char>();
    } else if (corpus_rows_ != nullptr) {
        queries_d_ = static_cast<const unsigned char*>(corpus_rows_) + b0 * row_bytes_;
    } else {
        ctx_.uploader->upload(corpus_, b0, nb, w.query_rows.get(), stream_);
        queries_d_ = w.query_rows.as<unsigned char>();
    }
    queries_f32_d_ = w.query_f32.as<float>();
    // A self-join's float32 queries for the exact re-scoring are its rows as the caller holds
    // them (float32, or float16 widened), as a search of those rows would upload them.
    if (self_ && (half_ || rescore_)) ctx_.f32_uploader->upload(corpus_, b0, nb, w.query_f32.get(), stream_);
}

/// The batch's scope on the device (row ranges, exclusions, filters; self-exclusion is the mask's
/// self_row0): the one place the pipeline applies a scope. Returns the largest row limit.
std::size_t TiledSearch::ranges_in(std::size_t b0, std::size_t nb) {
    Workspace& w = ctx_.workspace;
    const ScopeRules& scope = *args_.scope;
    limits_.assign(nb, 0);
    begins_.assign(nb, 0);
    std::size_t batch_limit = 0;
    for (std::size_t i = 0; i < nb; ++i) {
        limits_[i] = i64(scope.limit(b0 + i));
        begins_[i] = i64(scope.begin(b0 + i));
        batch_limit = std::max(batch_limit, scope.limit(b0 + i));
    }
    copy_to_device(ctx_.dev, limits_, w.limits, stream_);
    has_begins_ = scope.has_begins();
    if (has_begins_) copy_to_device(ctx_.dev, begins_, w.begins, stream_);
    filters_in(b0, nb);
    std::vector<std::int64_t> offsets, rows;
    scope.excluded_lists(b0, nb, offsets, rows);
    has_exclusions_ = !rows.empty();
    if (has_exclusions_) {
        // Grown, not reallocated per batch: cudaFree waits for the whole device.
        w.ensure(w.excluded_offsets, offsets.size() * sizeof(std::int64_t));
        w.ensure(w.excluded_rows, rows.size() * sizeof(std::int64_t));
        copy_to_device(ctx_.dev, offsets, w.excluded_offsets, stream_);
        copy_to_device(ctx_.dev, rows, w.excluded_rows, stream_);
        ctx_.stream->synchronize();  // the host vectors must outlive the asynchronous copies
    }
    return batch_limit;
}

/// The batch's row filters: each distinct filter's words once, and per query its index (-1: none).
void TiledSearch::filters_in(std::size_t b0, std::size_t nb) {
    has_filters_ = false;
    if (!args_.scope->has_filters()) return;
    std::vector<std::int32_t> index(nb, -1);
    std::vector<const RowFilter*> distinct;
    for (std::size_t i = 0; i < nb; ++i) {
        const RowFilter* filter = args_.scope->filter(b0 + i);
        if (filter == nullptr) continue;
        auto at = std::find(distinct.begin(), distinct.end(), filter);
        if (at == distinct.end()) at = distinct.insert(distinct.end(), filter);
        index[i] = static_cast<std::int32_t>(at - distinct.begin());
    }
    if (distinct.empty()) return;
    const std::size_t stride = distinct[0]->words.size();
    std::vector<std::uint64_t> words;
    words.reserve(distinct.size() * stride);
    for (const RowFilter* filter : distinct) words.insert(words.end(), filter->words.begin(), filter->words.end());
    Workspace& w = ctx_.workspace;
    w.ensure(w.filter_index, index.size() * sizeof(std::int32_t));
    w.ensure(w.filter_words, words.size() * sizeof(std::uint64_t));
    copy_to_device(ctx_.dev, index, w.filter_index, stream_);
    copy_to_device(ctx_.dev, words, w.filter_words, stream_);
    ctx_.stream->synchronize();  // the host vectors must outlive the asynchronous copies
    has_filters_ = true;
}

// --- the tile selector ---------------------------------------------------------------------

/// One pass of a batch over the chunks it needs; true when the filter overflowed.
bool TiledSearch::run_pass(std::size_t b0, std::size_t nb, std::size_t batch_limit, bool filtering) {
    Workspace& w = ctx_.workspace;
    // Empty candidates: every slot -inf / -1; no overflow yet.
    ctx_.dev.place_columns(nullptr, nullptr, i64(nb), 0, w.cand_vals.as<float>(), w.cand_idx.as<std::int64_t>(),
                                  i64(width_), 0, i64(width_), 0, stream_);
    ctx_.dev.fill_bytes(w.overflow.get(), 0, sizeof(int), stream_);
    std::vector<bool> tile_started((nb + qt_ - 1) / qt_, false);
    const std::size_t chunks_needed = (batch_limit + chunk_rows_ - 1) / chunk_rows_;
    if (corpus_rows_ == nullptr && chunks_needed > 0) upload_chunk(0);
    steps_done_ = (b0 / batch_) * n_chunks_;
    for (std::size_t chunk = 0; chunk < chunks_needed; ++chunk)
        search_chunk(chunk, chunks_needed, b0, nb, filtering, tile_started);
    // A filtered pass over 16-bit tiles holds exactly re-scored values already (filter_rescore.cu
    // computes them as candidate_dots.cu does): the final re-scoring would repeat them.
    return results_out(nb, half_ && filtering) != 0;
}

void TiledSearch::search_chunk(std::size_t chunk, std::size_t chunks_needed, std::size_t b0, std::size_t nb,
                               bool filtering, std::vector<bool>& tile_started) {
    TileJob job;
    job.c_first = chunk * chunk_rows_;
    const std::size_t c_rows = std::min(chunk_rows_, args_.n_rows - job.c_first);
    job.chunk_d = chunk_on_device(chunk, chunks_needed);
    for (job.q0 = 0; job.q0 < nb; job.q0 += qt_) {
        job.nq = std::min(qt_, nb - job.q0);
        std::int64_t tile_max = 0;
        job.tile_min = std::numeric_limits<std::int64_t>::max();
        job.begin_max = 0;
        for (std::size_t i = job.q0; i < job.q0 + job.nq; ++i) {
            tile_max = std::max(tile_max, limits_[i]);
            job.tile_min = std::min(job.tile_min, limits_[i]);
            job.begin_max = std::max(job.begin_max, begins_[i]);
        }
        for (job.c0 = job.c_first; job.c0 < job.c_first + c_rows; job.c0 += ct_) {
            if (i64(job.c0) >= tile_max) break;
            job.nc = std::min(ct_, job.c_first + c_rows - job.c0);
            select_tile(job, b0, filtering, tile_started);
        }
    }
    if (corpus_rows_ == nullptr) {
        const int slot = static_cast<int>(chunk % 2);
        consumed_[slot].record(stream_);
        consumed_recorded_[slot] = true;
    }
    if (*args_.progress) (*args_.progress)(++steps_done_, total_steps_);
}

void TiledSearch::mask_tile(const TileJob& job, std::size_t b0, void* sims, bool half) {
    Workspace& w = ctx_.workspace;
    kernels::TileMask mask;
    bool needs_mask = false;
    if (job.tile_min < i64(job.c0 + job.nc)) {
        mask.row_limit = w.limits.as<std::int64_t>() + job.q0;
        needs_mask = true;
    }
    if (has_begins_ && job.begin_max > i64(job.c0)) {
        mask.row_begin = w.begins.as<std::int64_t>() + job.q0;
        needs_mask = true;
    }
    mask.first_col = i64(job.c0);
    const std::int64_t self0 = args_.scope->self_row(b0 + job.q0);  // the tile's first query's own row
    if (self0 >= 0 && self0 < i64(job.c0 + job.nc) && i64(job.c0) < self0 + i64(job.nq)) {
        mask.self_row0 = self0;
        needs_mask = true;
    }
    if (has_filters_) {
        mask.filter_index = w.filter_index.as<std::int32_t>() + job.q0;
        mask.filter_words = w.filter_words.as<std::uint64_t>();
        mask.filter_stride = i64((corpus_.n_rows + 63) / 64);
        needs_mask = true;
    }
    if (has_exclusions_) {
        mask.excluded_offsets = w.excluded_offsets.as<std::int64_t>() + job.q0;
        mask.excluded_rows = w.excluded_rows.as<std::int64_t>();
        needs_mask = true;
    }
    if (!needs_mask) return;
    DeviceSpan span(ctx_.profile, stream_, "mask");
    ctx_.dev.mask_tile(sims, half ? Element::f16 : Element::f32, i64(job.nq), i64(job.nc), i64(job.nc), mask, stream_);
}

void TiledSearch::select_tile(const TileJob& job, std::size_t b0, bool filtering, std::vector<bool>& tile_started) {
    Workspace& w = ctx_.workspace;
    const std::size_t tile_index = job.q0 / qt_;
    // The first tile of a query tile fills the running best with a full selection; later ones
    // pass the threshold filter when it is on, over a float16 tile when half_.
    const bool later = filtering && tile_started[tile_index];
    const Element tile_type = half_ && later ? Element::f16 : Element::f32;
    const int parity = ctx_.overlap ? static_cast<int>(tile_number_++ % 2) : 0;
    void* sims = w.sims[parity].get();
    if (ctx_.overlap) sims_read_[parity].wait_on(gemm_stream_);
    ctx_.profile.add_count("tiles");
    if (tile_type == Element::f16) ctx_.profile.add_count("half_tiles");
    {
        DeviceSpan span(ctx_.profile, gemm_stream_, "gemm");
        ctx_.blas->similarity(gemm_stream_, ctx_.storage, queries_d_ + job.q0 * row_bytes_, i64(job.nq),
                              job.chunk_d + (job.c0 - job.c_first) * row_bytes_, i64(job.nc), i64(dim_), sims,
                              i64(job.nc), tile_type);
    }
    if (ctx_.overlap) {
        gemm_done_[parity].record(gemm_stream_);
        gemm_done_[parity].wait_on(stream_);
    }
    mask_tile(job, b0, sims, tile_type == Element::f16);
    float* cand_v = w.cand_vals.as<float>() + job.q0 * width_;
    std::int64_t* cand_i = w.cand_idx.as<std::int64_t>() + job.q0 * width_;
    if (later) {
        DeviceSpan select(ctx_.profile, stream_, "filter");
        if (half_)
            ctx_.dev.filter_rescore(rescore_job(job, sims, Element::f16, margin_half_, false), stream_);
        else
            ctx_.dev.filter_above(static_cast<const float*>(sims), i64(job.nq), i64(job.nc), cand_v, cand_i,
                                         i64(width_), i64(k_), i64(capacity_), i64(job.c0), w.overflow.as<int>(),
                                         stream_);
        if (ctx_.overlap) sims_read_[parity].record(stream_);
    } else {
        full_selection(job, static_cast<const float*>(sims), parity, half_ && filtering);
    }
    tile_started[tile_index] = true;
    DeviceSpan merge(ctx_.profile, stream_, "merge");
    ctx_.select->largest(cand_v, cand_i, i64(job.nq), i64(width_), i64(k_), w.best_vals.as<float>(),
                         w.best_idx.as<std::int64_t>(), stream_);
    ctx_.dev.place_columns(w.best_vals.as<float>(), w.best_idx.as<std::int64_t>(), i64(job.nq), i64(k_), cand_v,
                                  cand_i, i64(width_), 0, i64(k_), 0, stream_);
}

/// select_k over a float32 tile; its best k go to the candidate slots. `fresh` (16-bit tiles):
/// they go to the running best columns instead, only to give the threshold, and the filter
/// then keeps (re-scored) every entry that can belong to the exact top k.
void TiledSearch::full_selection(const TileJob& job, const float* sims, int parity, bool fresh) {
    Workspace& w = ctx_.workspace;
    DeviceSpan select(ctx_.profile, stream_, "select_full");
    ctx_.profile.add_count("full_selections");
    float* cand_v = w.cand_vals.as<float>() + job.q0 * width_;
    std::int64_t* cand_i = w.cand_idx.as<std::int64_t>() + job.q0 * width_;
    const std::size_t kk = std::min(k_, job.nc);
    ctx_.select->largest(sims, nullptr, i64(job.nq), i64(job.nc), i64(kk), w.tile_vals.as<float>(),
                         w.tile_idx.as<std::int64_t>(), stream_);
    if (!fresh && ctx_.overlap) sims_read_[parity].record(stream_);
    const std::size_t first_col = fresh ? 0 : k_, columns = fresh ? k_ : capacity_;
    ctx_.dev.place_columns(w.tile_vals.as<float>(), w.tile_idx.as<std::int64_t>(), i64(job.nq), i64(kk), cand_v,
                                  cand_i, i64(width_), i64(first_col), i64(columns), i64(job.c0), stream_);
    if (!fresh) return;
    ctx_.dev.filter_rescore(rescore_job(job, sims, Element::f32, margin_fresh_, true), stream_);
    if (ctx_.overlap) sims_read_[parity].record(stream_);
}

kernels::FilterRescoreJob TiledSearch::rescore_job(const TileJob& job, const void* sims, Element tile_type,
                                                   float margin, bool fresh) const {
    Workspace& w = ctx_.workspace;
    kernels::FilterRescoreJob f;
    f.tile = sims;
    f.tile_type = tile_type;
    f.n_rows = i64(job.nq);
    f.n_cols = i64(job.nc);
    f.cand_vals = w.cand_vals.as<float>() + job.q0 * width_;
    f.cand_idx = w.cand_idx.as<std::int64_t>() + job.q0 * width_;
    f.cand_ld = i64(width_);
    f.k = i64(k_);
    f.capacity = i64(capacity_);
    f.idx_offset = i64(job.c0);  // the corpus is resident: a tile column's row is its global index
    f.margin = margin;
    f.fresh = fresh;
    f.queries = queries_f32_d_ + job.q0 * dim_;
    f.rows = corpus_rows_;
    f.row_type = ctx_.storage;
    f.dim = i64(dim_);
    f.overflow = w.overflow.as<int>();
    return f;
}

// --- the finisher --------------------------------------------------------------------------

/// Queues the copies of the batch's running best k (re-scored first when rescore_ and the
/// values are not exact already), allocates the result while the device works, waits, and
/// returns the filter's overflow flag.
int TiledSearch::results_out(std::size_t nb, bool values_exact) {
    Workspace& w = ctx_.workspace;
    auto* host_vals = static_cast<float*>(w.host_vals.get());
    auto* host_idx = static_cast<std::int64_t*>(w.host_idx.get());
    {
        DeviceSpan out(ctx_.profile, stream_, "results_out");
        // Into pinned memory: a copy to pageable memory would make the host wait here for the
        // whole batch, before the result copies are queued and the result arrays allocated.
        ctx_.dev.copy(w.host_overflow.get(), w.overflow.get(), sizeof(int), dev::Copy::device_to_host, stream_);
        // Only the running best (the first k columns) comes back, into pinned memory.
        ctx_.dev.copy_2d(host_idx, k_ * sizeof(std::int64_t), w.cand_idx.get(), width_ * sizeof(std::int64_t),
                         k_ * sizeof(std::int64_t), nb, dev::Copy::device_to_host, stream_);
        if (rescore_ && !values_exact) {
            ctx_.dev.copy_2d(w.rerank_idx.get(), k_ * sizeof(std::int64_t), w.cand_idx.get(),
                             width_ * sizeof(std::int64_t), k_ * sizeof(std::int64_t), nb, dev::Copy::device_to_device,
                             stream_);
            DeviceSpan span(ctx_.profile, stream_, "rescore");
            ctx_.dev.candidate_dots(w.query_f32.as<float>(), corpus_rows_, ctx_.storage, i64(dim_), nullptr,
                                           w.rerank_idx.as<std::int64_t>(), i64(nb * k_), w.rerank_sims.as<float>(),
                                           stream_, i64(k_));
            span.end();
            ctx_.dev.copy(host_vals, w.rerank_sims.get(), nb * k_ * sizeof(float), dev::Copy::device_to_host, stream_);
        } else {
            ctx_.dev.copy_2d(host_vals, k_ * sizeof(float), w.cand_vals.get(), width_ * sizeof(float), k_ * sizeof(float),
                             nb, dev::Copy::device_to_host, stream_);
        }
    }
    {
        // The result's arrays (12 bytes per neighbour, 60 MB for 50k x 100) are filled in
        // while the device works on the first batch, not before its work is queued.
        HostSpan phase(ctx_.profile, "allocate_result");
        if (result_.count.size() != n_queries_) result_ = empty_top_k(n_queries_, k_);
    }
    HostSpan wait(ctx_.profile, "wait_for_device");
    ctx_.stream->synchronize();
    return *static_cast<const int*>(w.host_overflow.get());
}

}  // namespace

TopK tiled_search(DeviceContext& ctx, const TiledSearchArgs& args, bool& rescored_on_device) {
    TiledSearch call(ctx, args);
    return call.run(rescored_on_device);
}

}  // namespace novelty::cuda
