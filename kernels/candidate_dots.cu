// See candidate_dots.cuh. A warp strides over the dimension, then reduces with shuffles.
#include "candidate_dots.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "cuda_check.cuh"
#include "host_device.cuh"
#include "widen.cuh"

namespace novelty::kernels {
namespace {

constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / 32;
constexpr std::int64_t max_blocks = 65535;

template <typename Row>
__global__ void candidate_dots_kernel(const float* queries, const Row* rows, std::int64_t dim,
                                      const std::int32_t* pair_query, const std::int64_t* pair_row,
                                      std::int64_t n_pairs, float* out, std::int64_t pairs_per_query) {
    const int lane = threadIdx.x % 32;
    const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
    for (std::int64_t p = first; p < n_pairs; p += stride) {
        if (pair_row[p] < 0) {
            if (lane == 0) out[p] = -INFINITY;
            continue;
        }
        const std::int64_t query = pair_query != nullptr ? pair_query[p] : p / pairs_per_query;
        const float* q = queries + query * dim;
        const Row* v = rows + pair_row[p] * dim;
        float sum = lane_dot(q, [v](std::int64_t c) { return widen(v[c]); }, dim, lane);
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        if (lane == 0) out[p] = sum;
    }
}

template <typename Row>
void launch_typed(const float* queries, const void* rows, std::int64_t dim, const std::int32_t* pair_query,
                  const std::int64_t* pair_row, std::int64_t n_pairs, float* out, cudaStream_t stream,
                  std::int64_t pairs_per_query) {
    const auto blocks =
        static_cast<unsigned>(std::min(max_blocks, (n_pairs + warps_per_block - 1) / warps_per_block));
    candidate_dots_kernel<Row><<<blocks, block_threads, 0, stream>>>(queries, static_cast<const Row*>(rows), dim,
                                                                     pair_query, pair_row, n_pairs, out, pairs_per_query);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_candidate_dots(const float* queries, const void* rows, Element row_type, std::int64_t dim,
                           const std::int32_t* pair_query, const std::int64_t* pair_row, std::int64_t n_pairs,
                           float* out, cudaStream_t stream, std::int64_t pairs_per_query) {
    if (n_pairs <= 0) return;
    if (pair_query == nullptr && pairs_per_query < 1) throw KernelError("launch_candidate_dots: pairs_per_query must be >= 1");
    switch (row_type) {
        case Element::f32: return launch_typed<float>(queries, rows, dim, pair_query, pair_row, n_pairs, out, stream, pairs_per_query);
        case Element::f16: return launch_typed<__half>(queries, rows, dim, pair_query, pair_row, n_pairs, out, stream, pairs_per_query);
        case Element::bf16:
            return launch_typed<__nv_bfloat16>(queries, rows, dim, pair_query, pair_row, n_pairs, out, stream, pairs_per_query);
    }
    throw KernelError("launch_candidate_dots: unknown row element type");
}

}  // namespace novelty::kernels
