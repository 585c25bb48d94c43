// The search kernels on the emulated device. Per-element kernels run their shared bodies
// (kernels/*_body.cuh, host_device.cuh) over the grid in a host loop. The cooperative ones are
// host twins that reproduce the card's arithmetic: warp sums by the same xor butterfly
// (warp_butterfly_sum) and block sums in the card's order (block_sum_256), so dot products,
// norms and normalised rows are the card's bits; the threshold filters keep the same set of
// entries, in column order where a card's atomics give any order (a selection follows).
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "device/emulated/emulated_device.hpp"
#include "novelty/util/error.hpp"
#include "normalize_rows_body.cuh"
#include "place_columns_body.cuh"

namespace novelty::dev::emulated {

namespace {

constexpr float minus_inf = -std::numeric_limits<float>::infinity();
constexpr int block_threads = 256;  // the card's block size for these kernels

std::size_t bytes_of(Element type, std::size_t n) { return n * static_cast<std::size_t>(kernels::element_bytes(type)); }

/// The dot product of a float32 query with row `row` of `rows` as one warp computes it.
float warp_dot(const float* query, const void* rows, Element type, std::int64_t row, std::int64_t dim) {
    float lanes[kernels::warp_lanes];
    const std::size_t base = static_cast<std::size_t>(row * dim);
    for (int lane = 0; lane < kernels::warp_lanes; ++lane)
        lanes[lane] = kernels::lane_dot(
            query, [&](std::int64_t c) { return load_value(rows, type, base + static_cast<std::size_t>(c)); }, dim,
            lane);
    return kernels::warp_butterfly_sum(lanes);
}

/// A block of 256 threads' sum of one value per thread, in the card's order: each warp's xor
/// butterfly, then warp 0's butterfly over the 8 warp sums (its other lanes 0).
float block_sum_256(const float (&partials)[block_threads]) {
    float warp_sums[kernels::warp_lanes] = {};
    for (int w = 0; w < block_threads / kernels::warp_lanes; ++w) {
        float lanes[kernels::warp_lanes];
        std::memcpy(lanes, partials + w * kernels::warp_lanes, sizeof lanes);
        warp_sums[w] = kernels::warp_butterfly_sum(lanes);
    }
    return kernels::warp_butterfly_sum(warp_sums);
}

/// The smallest of a row's running best k values (+inf when k is 0): the filters' threshold.
float running_minimum(const float* vals, std::int64_t k) {
    float m = std::numeric_limits<float>::infinity();
    for (std::int64_t c = 0; c < k; ++c) m = std::fmin(m, vals[c]);
    return m;
}

}  // namespace

void EmulatedDevice::mask_tile(void* sims_d, Element tile_type, std::int64_t n_queries, std::int64_t n_cols,
                               std::int64_t ld, const kernels::TileMask& mask, Stream) {
    if (n_queries <= 0 || n_cols <= 0) return;
    check(sims_d, bytes_of(tile_type, static_cast<std::size_t>((n_queries - 1) * ld + n_cols)), "the masked tile");
    for (std::int64_t r = 0; r < n_queries; ++r) {
        const std::size_t row = static_cast<std::size_t>(r * ld);
        auto clear = [&](std::int64_t c) { store_value(sims_d, tile_type, row + static_cast<std::size_t>(c), minus_inf); };
        for (std::int64_t c = kernels::mask_limit_column(mask, r, n_cols); c < n_cols; ++c) clear(c);
        for (std::int64_t c = 0; c < kernels::mask_begin_column(mask, r, n_cols); ++c) clear(c);
        if (kernels::mask_has_filter(mask, r))
            for (std::int64_t c = 0; c < n_cols; ++c)
                if (!kernels::mask_filter_allows(mask, r, c)) clear(c);
        kernels::mask_single_columns(mask, r, n_cols, clear);
    }
}

void EmulatedDevice::place_columns(const float* src_vals_d, const std::int64_t* src_idx_d, std::int64_t n_rows,
                                   std::int64_t n_src, float* dst_vals_d, std::int64_t* dst_idx_d, std::int64_t dst_ld,
                                   std::int64_t dst_col, std::int64_t n_total, std::int64_t idx_offset, Stream) {
    if (n_rows <= 0 || n_total <= 0) return;
    if (n_src > n_total) throw Error("place_columns: more source columns than destination columns");
    const auto last = static_cast<std::size_t>((n_rows - 1) * dst_ld + dst_col + n_total);
    check(dst_vals_d, last * sizeof(float), "place_columns' destination values");
    check(dst_idx_d, last * sizeof(std::int64_t), "place_columns' destination indices");
    if (n_src > 0) check(src_vals_d, static_cast<std::size_t>(n_rows * n_src) * sizeof(float), "place_columns' source");
    for (std::int64_t i = 0; i < n_rows * n_total; ++i)
        kernels::place_column_entry(src_vals_d, src_idx_d, n_src, dst_vals_d, dst_idx_d, dst_ld, dst_col, n_total,
                                    idx_offset, i);
}

void EmulatedDevice::filter_above(const float* sims_d, std::int64_t n_rows, std::int64_t n_cols, float* cand_vals_d,
                                  std::int64_t* cand_idx_d, std::int64_t cand_ld, std::int64_t k, std::int64_t capacity,
                                  std::int64_t idx_offset, int* overflow_d, Stream) {
    if (n_rows <= 0) return;
    if (cand_ld < k + capacity) throw Error("filter_above: the candidate rows are too narrow");
    check(sims_d, static_cast<std::size_t>(n_rows * n_cols) * sizeof(float), "filter_above's tile");
    check(cand_vals_d, static_cast<std::size_t>(n_rows * cand_ld) * sizeof(float), "filter_above's candidates");
    check(overflow_d, sizeof(int), "filter_above's overflow flag");
    for (std::int64_t r = 0; r < n_rows; ++r) {
        float* vals = cand_vals_d + r * cand_ld;
        std::int64_t* idx = cand_idx_d + r * cand_ld;
        const float threshold = running_minimum(vals, k);
        std::int64_t found = 0;
        for (std::int64_t c = 0; c < n_cols; ++c) {
            const float value = sims_d[r * n_cols + c];
            if (!kernels::passes_threshold(value, threshold)) continue;
            if (found < capacity) {
                vals[k + found] = value;
                idx[k + found] = c + idx_offset;
            }
            ++found;
        }
        if (found > capacity) {
            *overflow_d = 1;
            continue;
        }
        for (std::int64_t c = found; c < capacity; ++c) {
            vals[k + c] = minus_inf;
            idx[k + c] = -1;
        }
    }
}

void EmulatedDevice::filter_rescore(const kernels::FilterRescoreJob& job, Stream) {
    if (job.n_rows <= 0) return;
    if (job.cand_ld < job.k + job.capacity) throw Error("filter_rescore: the candidate rows are too narrow");
    if (job.queries == nullptr || job.rows == nullptr || job.dim <= 0)
        throw Error("filter_rescore: the re-scoring needs the float32 queries and the stored rows");
    if (job.tile_type == Element::bf16) throw Error("filter_rescore: the tile must be float32 or float16");
    check(job.tile, bytes_of(job.tile_type, static_cast<std::size_t>(job.n_rows * job.n_cols)), "filter_rescore's tile");
    check(job.queries, static_cast<std::size_t>(job.n_rows * job.dim) * sizeof(float), "filter_rescore's queries");
    check(job.overflow, sizeof(int), "filter_rescore's overflow flag");
    for (std::int64_t r = 0; r < job.n_rows; ++r) {
        float* vals = job.cand_vals + r * job.cand_ld;
        std::int64_t* idx = job.cand_idx + r * job.cand_ld;
        const float threshold = running_minimum(vals, job.k) - job.margin;
        if (job.fresh)
            for (std::int64_t c = 0; c < job.k; ++c) {
                vals[c] = minus_inf;
                idx[c] = -1;
            }
        std::int64_t found = 0;
        for (std::int64_t c = 0; c < job.n_cols; ++c) {
            const float value = load_value(job.tile, job.tile_type, static_cast<std::size_t>(r * job.n_cols + c));
            if (!kernels::passes_threshold(value, threshold)) continue;
            if (found < job.capacity) idx[job.k + found] = c + job.idx_offset;
            ++found;
        }
        if (found > job.capacity) {
            *job.overflow = 1;
            continue;
        }
        for (std::int64_t s = 0; s < found; ++s) {
            check(static_cast<const unsigned char*>(job.rows) + bytes_of(job.row_type, static_cast<std::size_t>(idx[job.k + s] * job.dim)),
                  bytes_of(job.row_type, static_cast<std::size_t>(job.dim)), "filter_rescore's stored row");
            vals[job.k + s] = warp_dot(job.queries + r * job.dim, job.rows, job.row_type, idx[job.k + s], job.dim);
        }
        for (std::int64_t c = found; c < job.capacity; ++c) {
            vals[job.k + c] = minus_inf;
            idx[job.k + c] = -1;
        }
    }
}

void EmulatedDevice::candidate_dots(const float* queries_d, const void* rows_d, Element row_type, std::int64_t dim,
                                    const std::int32_t* pair_query_d, const std::int64_t* pair_row_d,
                                    std::int64_t n_pairs, float* out_d, Stream, std::int64_t pairs_per_query) {
    if (n_pairs <= 0) return;
    if (pair_query_d == nullptr && pairs_per_query < 1) throw Error("candidate_dots: pairs_per_query must be >= 1");
    check(pair_row_d, static_cast<std::size_t>(n_pairs) * sizeof(std::int64_t), "candidate_dots' pair rows");
    check(out_d, static_cast<std::size_t>(n_pairs) * sizeof(float), "candidate_dots' output");
    for (std::int64_t p = 0; p < n_pairs; ++p) {
        if (pair_row_d[p] < 0) {
            out_d[p] = minus_inf;
            continue;
        }
        const std::int64_t query = pair_query_d != nullptr ? pair_query_d[p] : p / pairs_per_query;
        check(queries_d + query * dim, static_cast<std::size_t>(dim) * sizeof(float), "candidate_dots' query");
        check(static_cast<const unsigned char*>(rows_d) + bytes_of(row_type, static_cast<std::size_t>(pair_row_d[p] * dim)),
              bytes_of(row_type, static_cast<std::size_t>(dim)), "candidate_dots' row");
        out_d[p] = warp_dot(queries_d + query * dim, rows_d, row_type, pair_row_d[p], dim);
    }
}

void EmulatedDevice::convert_values(const void* in_d, Element in_type, void* out_d, Element out_type, std::size_t n,
                                    Stream stream) {
    if (n == 0) return;
    if (in_type == out_type) return copy(out_d, in_d, bytes_of(in_type, n), Copy::device_to_device, stream);
    check(in_d, bytes_of(in_type, n), "convert_values' input");
    check(out_d, bytes_of(out_type, n), "convert_values' output");
    std::vector<float> values(n);
    load_values(in_d, in_type, n, values.data());
    store_values(out_d, out_type, n, values.data());
}

void EmulatedDevice::max_row_norm(const void* rows_d, Element type, std::int64_t n_rows, std::int64_t dim, float* out_d,
                                  Stream) {
    if (n_rows <= 0 || dim <= 0) return;
    check(rows_d, bytes_of(type, static_cast<std::size_t>(n_rows * dim)), "max_row_norm's rows");
    check(out_d, sizeof(float), "max_row_norm's output");
    for (std::int64_t r = 0; r < n_rows; ++r) {
        float lanes[kernels::warp_lanes];
        const std::size_t base = static_cast<std::size_t>(r * dim);
        for (int lane = 0; lane < kernels::warp_lanes; ++lane)
            lanes[lane] = kernels::lane_square_sum(
                [&](std::int64_t c) { return load_value(rows_d, type, base + static_cast<std::size_t>(c)); }, dim, lane);
        const float sum = kernels::warp_butterfly_sum(lanes);
        const float norm = std::isfinite(sum) ? std::sqrt(sum) : std::numeric_limits<float>::infinity();
        if (norm > *out_d) *out_d = norm;
    }
}

void EmulatedDevice::normalize_rows(const float* in_d, void* out_d, Element out_type, std::size_t n_rows,
                                    std::size_t dim, int* row_status_d, Stream) {
    if (n_rows == 0) return;
    if (out_type == Element::bf16) throw Error("normalize_rows: the output is float32 or float16");
    check(in_d, n_rows * dim * sizeof(float), "normalize_rows' input");
    check(out_d, bytes_of(out_type, n_rows * dim), "normalize_rows' output");
    if (row_status_d != nullptr) check(row_status_d, n_rows * sizeof(int), "normalize_rows' statuses");
    for (std::size_t row = 0; row < n_rows; ++row) {
        const float* src = in_d + row * dim;
        float max_abs = 0.0f;
        bool bad = false;
        for (std::size_t i = 0; i < dim; ++i) {
            if (!std::isfinite(src[i])) bad = true;
            else max_abs = std::fmax(max_abs, std::fabs(src[i]));
        }
        const int status = bad ? kernels::row_not_finite : max_abs == 0.0f ? kernels::row_zero_norm : kernels::row_ok;
        if (status == kernels::row_ok) {
            float partials[block_threads] = {};
            for (std::size_t i = 0; i < dim; ++i) {
                const float t = src[i] / max_abs;
                partials[i % block_threads] = std::fma(t, t, partials[i % block_threads]);
            }
            const float scaled_norm = std::sqrt(block_sum_256(partials));
            for (std::size_t i = 0; i < dim; ++i) store_value(out_d, out_type, row * dim + i, (src[i] / max_abs) / scaled_norm);
        } else {
            for (std::size_t i = 0; i < dim; ++i) store_value(out_d, out_type, row * dim + i, src[i]);
        }
        if (row_status_d != nullptr) row_status_d[row] = status;
    }
}

}  // namespace novelty::dev::emulated
