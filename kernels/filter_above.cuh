// The threshold filter that spares most tiles a full top-k selection: once a query holds k
// running candidates, only tile entries at or above the k-th best of them can enter, and on
// random or real embeddings these are few. Each tile row's qualifying entries are compacted
// into a small buffer that a cheap selection then merges.
//
// Shapes (row-major, device memory): sims is n_rows x n_cols float32 with leading dimension
// n_cols; cand_vals / cand_idx are n_rows x cand_ld, whose columns [0, k) hold each row's
// running best (-inf / -1 in empty slots) and whose columns [k, k + capacity) receive the
// compacted entries (value, column + idx_offset), the unused ones set to -inf / -1.
// Entries equal to the threshold are kept (a tie may still win by lower row), -inf never.
// A row with more than `capacity` qualifying entries sets *overflow to 1: its compacted set
// is then incomplete and the caller must redo the work without the filter. A row whose
// running best still has an empty slot has threshold -inf. Queued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace novelty::kernels {

/// One block per row. Throws KernelError when the launch fails.
void launch_filter_above(const float* sims, std::int64_t n_rows, std::int64_t n_cols, float* cand_vals,
                         std::int64_t* cand_idx, std::int64_t cand_ld, std::int64_t k, std::int64_t capacity,
                         std::int64_t idx_offset, int* overflow, cudaStream_t stream);

}  // namespace novelty::kernels
