// One thread block per row (grid-stride over rows): a max-magnitude pass with a finiteness
// check, a scaled sum-of-squares pass, then a write pass. See normalize_rows.cuh for the rules.
// Relies on IEEE division and subnormals being kept (nvcc's defaults; no --use_fast_math), so
// that rows of tiny values normalise like they do on the CPU.
#include "normalize_rows.cuh"

#include <cuda_fp16.h>

#include <algorithm>

#include "cuda_check.cuh"

namespace novelty::kernels {
namespace {

constexpr int block_threads = 256;  // a multiple of 32, at most 1024
constexpr int max_warps = block_threads / 32;
constexpr std::size_t max_blocks = 65535;

struct max_op {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
    __device__ float operator()(float a, float b) const { return a + b; }
};

/// Reduces `value` over the whole block with `op` (identity 0, true for both uses here: max of
/// magnitudes and sum of squares). Every thread of the block must call it; every thread gets
/// the result. `scratch` holds max_warps floats and may be reused after the call returns.
template <typename Op>
__device__ float block_reduce(float value, Op op, float* scratch) {
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset /= 2) {
        value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
    }
    if (lane == 0) scratch[warp] = value;
    __syncthreads();
    if (warp == 0) {
        const int n_warps = static_cast<int>(blockDim.x) / 32;
        value = lane < n_warps ? scratch[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2) {
            value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
        }
        if (lane == 0) scratch[0] = value;
    }
    __syncthreads();
    const float result = scratch[0];
    __syncthreads();  // nobody may overwrite scratch before everyone has read the result
    return result;
}

__device__ inline void store(float* out, std::size_t i, float value) { out[i] = value; }

__device__ inline void store(std::uint16_t* out, std::size_t i, float value) {
    out[i] = __half_as_ushort(__float2half_rn(value));
}

template <typename Out>
__global__ void __launch_bounds__(block_threads)
normalize_rows_kernel(const float* in, Out* out, std::size_t n_rows, std::size_t dim,
                      int* row_status) {
    __shared__ float scratch[max_warps];
    for (std::size_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
        const float* src = in + row * dim;
        Out* dst = out + row * dim;

        // Pass 1: largest magnitude, and whether any value is NaN or Inf.
        float local_max = 0.0f;
        int local_bad = 0;
        for (std::size_t i = threadIdx.x; i < dim; i += blockDim.x) {
            const float v = src[i];
            if (!isfinite(v)) {
                local_bad = 1;
            } else {
                local_max = fmaxf(local_max, fabsf(v));
            }
        }
        const bool bad = __syncthreads_or(local_bad) != 0;
        const float max_abs = block_reduce(local_max, max_op{}, scratch);

        // The status is the same for every thread of the block, so these branches are uniform.
        int status = row_ok;
        if (bad) {
            status = row_not_finite;
        } else if (max_abs == 0.0f) {
            status = row_zero_norm;
        }

        if (status == row_ok) {
            // Pass 2: sum of squares of the scaled row; every term is <= 1, one term is 1.
            float local_sum = 0.0f;
            for (std::size_t i = threadIdx.x; i < dim; i += blockDim.x) {
                const float t = src[i] / max_abs;
                local_sum = fmaf(t, t, local_sum);
            }
            const float scaled_norm = sqrtf(block_reduce(local_sum, sum_op{}, scratch));
            // Pass 3: x / ||x|| = (x / max) / ||x / max||. Each thread reads and then writes
            // only its own elements, so out == in is safe.
            for (std::size_t i = threadIdx.x; i < dim; i += blockDim.x) {
                store(dst, i, (src[i] / max_abs) / scaled_norm);
            }
        } else {
            for (std::size_t i = threadIdx.x; i < dim; i += blockDim.x) {
                store(dst, i, src[i]);
            }
        }
        if (row_status != nullptr && threadIdx.x == 0) row_status[row] = status;
    }
}

template <typename Out>
void launch(const float* in, Out* out, std::size_t n_rows, std::size_t dim, int* row_status,
            cudaStream_t stream) {
    if (n_rows == 0) return;
    const auto blocks = static_cast<unsigned int>(std::min(n_rows, max_blocks));
    normalize_rows_kernel<Out><<<blocks, block_threads, 0, stream>>>(in, out, n_rows, dim,
                                                                     row_status);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_normalize_rows_f32(const float* in, float* out, std::size_t n_rows, std::size_t dim,
                               int* row_status, cudaStream_t stream) {
    launch(in, out, n_rows, dim, row_status, stream);
}

void launch_normalize_rows_f16(const float* in, std::uint16_t* out, std::size_t n_rows,
                               std::size_t dim, int* row_status, cudaStream_t stream) {
    launch(in, out, n_rows, dim, row_status, stream);
}

}  // namespace novelty::kernels
