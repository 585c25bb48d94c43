// L2 normalisation of float32 rows on the device: the CUDA counterpart of
// novelty::normalize_rows (engine/src/corpus/normalize_rows.cpp, the reference).
//
// Shapes: `in` is n_rows x dim float32, row-major, in device memory; `out` has the same shape
// (float32 or binary16 bits); `row_status` has n_rows ints. All pointers are raw device
// pointers; the work is queued on `stream` and nothing is synchronised.
//
// Per row, the same rules as the CPU reference:
//   row_status = 0 (ok):          out = in / ||in||_2
//   row_status = 1 (not finite):  the row holds a NaN or +-Inf; out = in, unchanged
//   row_status = 2 (zero norm):   every element is +-0 (or dim == 0); out = in, unchanged
// A row with both a non-finite value and zeros is "not finite". With float16 output the
// unchanged rows are converted like any value (NaN stays NaN, +-Inf and values beyond the
// float16 range become +-Inf).
//
// Precision: the CPU reference sums squares in double. Here each row is first scaled by its
// largest magnitude and the squares of the scaled values are summed in float with a block
// tree reduction, so no float overflow or underflow occurs, and "zero norm" means exactly
// "all elements zero", as it does in double. Normalised float32 values agree with the
// reference to about 1e-6 relative (a few float ulps; the tests use 1e-6); float16 output is
// the float32 result rounded to nearest even.
#pragma once

#include <cuda_runtime_api.h>

#include "normalize_rows_body.cuh"

#include <cstddef>
#include <cstdint>

namespace novelty::kernels {


/// Normalises each row of `in` into `out` (float32). `out` may equal `in` (in place); other
/// overlaps are not allowed. `row_status` may be nullptr when statuses are not wanted. Does
/// nothing when n_rows == 0. Throws KernelError when the launch fails.
void launch_normalize_rows_f32(const float* in, float* out, std::size_t n_rows, std::size_t dim,
                               int* row_status, cudaStream_t stream);

/// As launch_normalize_rows_f32, writing IEEE binary16 bit patterns (the bits of a __half) to
/// `out`, which must not overlap `in`.
void launch_normalize_rows_f16(const float* in, std::uint16_t* out, std::size_t n_rows,
                               std::size_t dim, int* row_status, cudaStream_t stream);

}  // namespace novelty::kernels
