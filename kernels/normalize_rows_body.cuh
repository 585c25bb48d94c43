// The row statuses of normalize_rows.cuh, CUDA-free so that the emulated device names them.
#pragma once

namespace novelty::kernels {

/// Status values written to row_status.
enum : int { row_ok = 0, row_not_finite = 1, row_zero_norm = 2 };

}  // namespace novelty::kernels
