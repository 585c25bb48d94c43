// The threshold filter of 16-bit similarity tiles (docs/cuda.md, "16-bit similarity tiles"):
// like filter_above.cuh, but the tile's values are only within `margin` of the exact ones, so
// the threshold is lowered by the margin, and every entry kept is re-scored exactly (its float32
// query against the stored row) before the merge. The running best then holds exact values only.
//
// Shapes (row-major, device memory): tile is n_rows x n_cols of `tile_type` (f32 or f16) with
// leading dimension n_cols; tile row r is queries row r (float32, dim values); a tile column c
// is stored row c + idx_offset of `rows` (`row_type`, dim values per row). cand_vals / cand_idx
// are n_rows x cand_ld: columns [0, k) hold each row's running best (-inf / -1 in empty slots),
// columns [k, k + capacity) receive the kept entries (exact value, column + idx_offset), the
// unused ones set to -inf / -1.
//
// Threshold per row: the smallest running best value minus `margin` (-inf while a slot is
// empty). Entries at or above it are kept, -inf never. `fresh`: the running best columns only
// supply the threshold and are then emptied (a query tile's first corpus tile: its selection
// over the float32 tile gives the threshold, and the filter then keeps every entry that could
// belong to the exact top k, the selected ones among them). A row with more than `capacity`
// kept entries sets *overflow to 1 and its slots are incomplete: the caller redoes the batch
// without the filter. Queued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.cuh"
#include "filter_rescore_body.cuh"

namespace novelty::kernels {

/// One block per tile row. Throws KernelError for bad shapes or when the launch fails.
void launch_filter_rescore(const FilterRescoreJob& job, cudaStream_t stream);

}  // namespace novelty::kernels
