// Moves selected (value, index) pairs into a column block of a wider candidate matrix: the
// step that merges one tile's top-k into a query's running candidates.
//
// Shapes (row-major, device memory): src is n_rows x n_src (values and int64 indices, leading
// dimension n_src); dst is n_rows x dst_ld. Columns [dst_col, dst_col + n_src) of dst receive
// src with idx_offset added to each index, except that a value of -inf gets index -1 (an
// empty slot); columns [dst_col + n_src, dst_col + n_total) are set to -inf / -1.
// n_total >= n_src. Work is queued on `stream`; nothing is synchronised.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace novelty::kernels {

/// Throws KernelError when the launch fails.
void launch_place_columns(const float* src_vals, const std::int64_t* src_idx, std::int64_t n_rows,
                          std::int64_t n_src, float* dst_vals, std::int64_t* dst_idx, std::int64_t dst_ld,
                          std::int64_t dst_col, std::int64_t n_total, std::int64_t idx_offset,
                          cudaStream_t stream);

}  // namespace novelty::kernels
