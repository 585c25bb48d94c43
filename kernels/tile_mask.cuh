// Masks entries of a query x corpus similarity tile that must not be selected, by setting them
// to -inf: columns at or beyond each query's searchable row limit (a date cutoff is a row
// prefix), columns below each query's first searchable row (a split date's window), columns
// its row filter does not allow (metadata filters), each query's own row (self-join), and each
// query's excluded rows.
//
// Shapes: `sims` is n_queries x n_cols float32 (float16 for launch_mask_tile_f16), row-major with leading dimension `ld`, in
// device memory; tile row r is query r of the tile, tile column c is corpus row first_col + c.
// All pointers in TileMask are device pointers and may be null (that rule is then off).
// Work is queued on `stream`; nothing is synchronised.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace novelty::kernels {

struct TileMask {
    /// Per tile query: corpus rows [0, row_limit[r]) are searchable. Null: all are.
    const std::int64_t* row_limit = nullptr;
    /// Per tile query: corpus rows below row_begin[r] are not searchable. Null: none are cut.
    const std::int64_t* row_begin = nullptr;
    /// The corpus row of tile column 0.
    std::int64_t first_col = 0;
    /// Self-join: tile query r is corpus row self_row0 + r, which is masked. -1: no self rows.
    std::int64_t self_row0 = -1;
    /// Excluded rows as CSR: query r's excluded corpus rows are
    /// excluded_rows[excluded_offsets[r] .. excluded_offsets[r + 1]). Null: none.
    const std::int64_t* excluded_offsets = nullptr;
    const std::int64_t* excluded_rows = nullptr;
    /// Row filters as bitmasks: tile query r may find corpus row c only when bit c % 64 of word
    /// c / 64 of filter filter_index[r] is set; filter f's words start at filter_words +
    /// f * filter_stride. filter_index[r] < 0: no filter for that query. Null: no filters.
    const std::int32_t* filter_index = nullptr;
    const std::uint64_t* filter_words = nullptr;
    std::int64_t filter_stride = 0;
};

/// One block per tile row. Throws KernelError when the launch fails.
void launch_mask_tile(float* sims, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                      const TileMask& mask, cudaStream_t stream);
/// The same on a float16 tile (16-bit similarity tiles, docs/cuda.md).
void launch_mask_tile_f16(void* sims, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                          const TileMask& mask, cudaStream_t stream);

}  // namespace novelty::kernels
