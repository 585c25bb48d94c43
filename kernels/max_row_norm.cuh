// The largest L2 norm among the rows of a device matrix: what the margin of 16-bit similarity
// tiles needs to know about the stored rows (engine/src/search/tile_margin.hpp).
//
// Shapes: rows is n_rows x dim of `type`, row-major, in device memory; *out (device memory, one
// float) must be 0 before the launch and receives the largest row's norm as summed in float32
// (the caller allows for that sum's rounding), or +inf when a row holds NaN or Inf. Queued on
// `stream`; nothing is synchronised.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.cuh"

namespace novelty::kernels {

/// One warp per row. Throws KernelError when the launch fails.
void launch_max_row_norm(const void* rows, Element type, std::int64_t n_rows, std::int64_t dim, float* out,
                         cudaStream_t stream);

}  // namespace novelty::kernels
