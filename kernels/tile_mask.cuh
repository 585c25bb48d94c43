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

#include "tile_mask_body.cuh"

namespace novelty::kernels {

/// One block per tile row. Throws KernelError when the launch fails.
void launch_mask_tile(float* sims, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                      const TileMask& mask, cudaStream_t stream);
/// The same on a float16 tile (16-bit similarity tiles, docs/cuda.md).
void launch_mask_tile_f16(void* sims, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                          const TileMask& mask, cudaStream_t stream);

}  // namespace novelty::kernels
