// See filter_above.cuh. One block per row: a block-wide minimum of the running best gives the
// threshold; the row is scanned with 16-byte loads where its alignment allows; qualifying
// entries get slots from a shared-memory counter.
#include "filter_above.cuh"

#include <cmath>

#include "cuda_check.cuh"
#include "host_device.cuh"

namespace novelty::kernels {
namespace {

constexpr int block_threads = 256;

__device__ inline void offer(float value, std::int64_t column, float threshold, float* vals, std::int64_t* idx,
                             std::int64_t capacity, std::int64_t idx_offset, int* count) {
    if (passes_threshold(value, threshold)) {
        const int slot = atomicAdd(count, 1);
        if (slot < capacity) {
            vals[slot] = value;
            idx[slot] = column + idx_offset;
        }
    }
}

__global__ void __launch_bounds__(block_threads)
filter_above_kernel(const float* sims, std::int64_t n_cols, float* cand_vals, std::int64_t* cand_idx,
                    std::int64_t cand_ld, std::int64_t k, std::int64_t capacity, std::int64_t idx_offset,
                    int* overflow) {
    __shared__ float warp_min[block_threads / 32];
    __shared__ int count;
    const std::int64_t r = blockIdx.x;
    float* vals = cand_vals + r * cand_ld;
    std::int64_t* idx = cand_idx + r * cand_ld;

    // Threshold: the smallest of the running best k (-inf while a slot is empty).
    float local = INFINITY;
    for (std::int64_t c = threadIdx.x; c < k; c += blockDim.x) local = fminf(local, vals[c]);
    for (int offset = 16; offset > 0; offset /= 2) local = fminf(local, __shfl_xor_sync(0xffffffffu, local, offset));
    if (threadIdx.x % 32 == 0) warp_min[threadIdx.x / 32] = local;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    float threshold = warp_min[0];
    for (int w = 1; w < block_threads / 32; ++w) threshold = fminf(threshold, warp_min[w]);

    float* out_vals = vals + k;
    std::int64_t* out_idx = idx + k;
    const float* row = sims + r * n_cols;
    if (n_cols % 4 == 0) {  // rows start 16-byte aligned: vector loads
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (std::int64_t c4 = threadIdx.x; c4 < n_cols / 4; c4 += blockDim.x) {
            const float4 v = row4[c4];
            offer(v.x, 4 * c4, threshold, out_vals, out_idx, capacity, idx_offset, &count);
            offer(v.y, 4 * c4 + 1, threshold, out_vals, out_idx, capacity, idx_offset, &count);
            offer(v.z, 4 * c4 + 2, threshold, out_vals, out_idx, capacity, idx_offset, &count);
            offer(v.w, 4 * c4 + 3, threshold, out_vals, out_idx, capacity, idx_offset, &count);
        }
    } else {
        for (std::int64_t c = threadIdx.x; c < n_cols; c += blockDim.x)
            offer(row[c], c, threshold, out_vals, out_idx, capacity, idx_offset, &count);
    }
    __syncthreads();
    const int found = count;
    if (found > capacity) {
        if (threadIdx.x == 0) atomicOr(overflow, 1);
        return;
    }
    for (std::int64_t c = found + threadIdx.x; c < capacity; c += blockDim.x) {
        out_vals[c] = -INFINITY;
        out_idx[c] = -1;
    }
}

}  // namespace

void launch_filter_above(const float* sims, std::int64_t n_rows, std::int64_t n_cols, float* cand_vals,
                         std::int64_t* cand_idx, std::int64_t cand_ld, std::int64_t k, std::int64_t capacity,
                         std::int64_t idx_offset, int* overflow, cudaStream_t stream) {
    if (n_rows <= 0) return;
    if (n_rows > 0x7fffffff) throw KernelError("launch_filter_above: too many rows for one launch");
    if (cand_ld < k + capacity) throw KernelError("launch_filter_above: the candidate rows are too narrow");
    filter_above_kernel<<<static_cast<unsigned>(n_rows), block_threads, 0, stream>>>(
        sims, n_cols, cand_vals, cand_idx, cand_ld, k, capacity, idx_offset, overflow);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace novelty::kernels
