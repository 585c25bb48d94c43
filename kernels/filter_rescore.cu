// See filter_rescore.cuh. One block per tile row: a block-wide minimum of the running best gives
// the threshold; the row is scanned with 16-byte loads where its alignment allows; kept entries
// get slots from a shared-memory counter; then each warp re-scores slots the way
// candidate_dots.cu does (lanes stride over the dimension with fmaf, then a shuffle reduction),
// so a slot's value is bit for bit what the final re-scoring would give it.
#include "filter_rescore.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "cuda_check.cuh"
#include "host_device.cuh"
#include "widen.cuh"

namespace novelty::kernels {
namespace {

constexpr int block_threads = 256;
constexpr int block_warps = block_threads / 32;


/// Where a row's kept entries go.
struct Slots {
    std::int64_t* idx;
    int* count;
    std::int64_t capacity, idx_offset;
    float threshold;
};

__device__ inline void keep(float value, std::int64_t column, const Slots& s) {
    if (passes_threshold(value, s.threshold)) {
        const int slot = atomicAdd(s.count, 1);
        if (slot < s.capacity) s.idx[slot] = column + s.idx_offset;
    }
}

/// The smallest running best value minus the margin (-inf while a slot is empty); with
/// `fresh`, the running best slots are emptied once every thread has read them.
__device__ float row_threshold(float* vals, std::int64_t* idx, std::int64_t k, float margin, bool fresh) {
    __shared__ float warp_min[block_warps];
    float local = INFINITY;
    for (std::int64_t c = threadIdx.x; c < k; c += blockDim.x) local = fminf(local, vals[c]);
    for (int offset = 16; offset > 0; offset /= 2) local = fminf(local, __shfl_xor_sync(0xffffffffu, local, offset));
    if (threadIdx.x % 32 == 0) warp_min[threadIdx.x / 32] = local;
    __syncthreads();
    float threshold = warp_min[0];
    for (int w = 1; w < block_warps; ++w) threshold = fminf(threshold, warp_min[w]);
    if (fresh) {
        for (std::int64_t c = threadIdx.x; c < k; c += blockDim.x) {
            vals[c] = -INFINITY;
            idx[c] = -1;
        }
    }
    return threshold - margin;
}

__device__ void scan_row(const float* row, std::int64_t n_cols, const Slots& s) {
    if (n_cols % 4 == 0) {  // rows start 16-byte aligned: vector loads
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (std::int64_t c4 = threadIdx.x; c4 < n_cols / 4; c4 += blockDim.x) {
            const float4 v = row4[c4];
            keep(v.x, 4 * c4, s);
            keep(v.y, 4 * c4 + 1, s);
            keep(v.z, 4 * c4 + 2, s);
            keep(v.w, 4 * c4 + 3, s);
        }
        return;
    }
    for (std::int64_t c = threadIdx.x; c < n_cols; c += blockDim.x) keep(row[c], c, s);
}

__device__ void scan_row(const __half* row, std::int64_t n_cols, const Slots& s) {
    if (n_cols % 8 == 0) {  // rows start 16-byte aligned: eight values per load
        const uint4* row8 = reinterpret_cast<const uint4*>(row);
        for (std::int64_t c8 = threadIdx.x; c8 < n_cols / 8; c8 += blockDim.x) {
            const uint4 bits = row8[c8];
            const __half2* pairs = reinterpret_cast<const __half2*>(&bits);
            for (int p = 0; p < 4; ++p) {
                const float2 v = __half22float2(pairs[p]);
                keep(v.x, 8 * c8 + 2 * p, s);
                keep(v.y, 8 * c8 + 2 * p + 1, s);
            }
        }
        return;
    }
    for (std::int64_t c = threadIdx.x; c < n_cols; c += blockDim.x) keep(__half2float(row[c]), c, s);
}

/// vals[s] = query . rows[idx[s]] for the slots s < found, one warp per slot.
template <typename Row>
__device__ void rescore_slots(const float* query, const Row* rows, std::int64_t dim, float* vals,
                              const std::int64_t* idx, int found) {
    const int lane = threadIdx.x % 32;
    for (int slot = threadIdx.x / 32; slot < found; slot += block_warps) {
        const Row* v = rows + idx[slot] * dim;
        float sum = lane_dot(query, [v](std::int64_t c) { return widen(v[c]); }, dim, lane);
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        if (lane == 0) vals[slot] = sum;
    }
}

template <typename Tile, typename Row>
__global__ void __launch_bounds__(block_threads) filter_rescore_kernel(FilterRescoreJob job) {
    __shared__ int count;
    const std::int64_t r = blockIdx.x;
    float* vals = job.cand_vals + r * job.cand_ld;
    std::int64_t* idx = job.cand_idx + r * job.cand_ld;
    if (threadIdx.x == 0) count = 0;
    const float threshold = row_threshold(vals, idx, job.k, job.margin, job.fresh);  // synchronises the block
    const Slots slots{idx + job.k, &count, job.capacity, job.idx_offset, threshold};
    scan_row(static_cast<const Tile*>(job.tile) + r * job.n_cols, job.n_cols, slots);
    __syncthreads();
    const int found = count;
    if (found > job.capacity) {
        if (threadIdx.x == 0) atomicOr(job.overflow, 1);
        return;
    }
    float* out_vals = vals + job.k;
    rescore_slots(job.queries + r * job.dim, static_cast<const Row*>(job.rows), job.dim, out_vals, slots.idx, found);
    for (std::int64_t c = found + threadIdx.x; c < job.capacity; c += blockDim.x) {
        out_vals[c] = -INFINITY;
        slots.idx[c] = -1;
    }
}

template <typename Tile>
void launch_for_tile(const FilterRescoreJob& job, cudaStream_t stream) {
    const auto blocks = static_cast<unsigned>(job.n_rows);
    switch (job.row_type) {
        case Element::f32: filter_rescore_kernel<Tile, float><<<blocks, block_threads, 0, stream>>>(job); break;
        case Element::f16: filter_rescore_kernel<Tile, __half><<<blocks, block_threads, 0, stream>>>(job); break;
        case Element::bf16: filter_rescore_kernel<Tile, __nv_bfloat16><<<blocks, block_threads, 0, stream>>>(job); break;
    }
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_filter_rescore(const FilterRescoreJob& job, cudaStream_t stream) {
    if (job.n_rows <= 0) return;
    if (job.n_rows > 0x7fffffff) throw KernelError("launch_filter_rescore: too many rows for one launch");
    if (job.cand_ld < job.k + job.capacity) throw KernelError("launch_filter_rescore: the candidate rows are too narrow");
    if (job.capacity > 0x7fffffff) throw KernelError("launch_filter_rescore: the capacity is beyond int");
    if (job.queries == nullptr || job.rows == nullptr || job.dim <= 0)
        throw KernelError("launch_filter_rescore: the re-scoring needs the float32 queries and the stored rows");
    switch (job.tile_type) {
        case Element::f32: return launch_for_tile<float>(job, stream);
        case Element::f16: return launch_for_tile<__half>(job, stream);
        case Element::bf16: break;
    }
    throw KernelError("launch_filter_rescore: the tile must be float32 or float16");
}

}  // namespace novelty::kernels
