// See max_row_norm.cuh. Non-negative float32 values order as their bit patterns do, so the
// maximum is an integer atomicMax on the bits; NaN and Inf rows write +inf.
#include "max_row_norm.cuh"

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
__global__ void max_row_norm_kernel(const Row* rows, std::int64_t n_rows, std::int64_t dim, float* out) {
    const int lane = threadIdx.x % 32;
    const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
    float largest = 0.0f;
    for (std::int64_t r = first; r < n_rows; r += stride) {
        const Row* v = rows + r * dim;
        float sum = lane_square_sum([v](std::int64_t c) { return widen(v[c]); }, dim, lane);
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        const float norm = isfinite(sum) ? sqrtf(sum) : INFINITY;
        largest = fmaxf(largest, norm);
    }
    if (lane == 0 && largest > 0.0f) atomicMax(reinterpret_cast<int*>(out), __float_as_int(largest));
}

template <typename Row>
void launch_typed(const void* rows, std::int64_t n_rows, std::int64_t dim, float* out, cudaStream_t stream) {
    const auto blocks = static_cast<unsigned>(std::min(max_blocks, (n_rows + warps_per_block - 1) / warps_per_block));
    max_row_norm_kernel<Row><<<blocks, block_threads, 0, stream>>>(static_cast<const Row*>(rows), n_rows, dim, out);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_max_row_norm(const void* rows, Element type, std::int64_t n_rows, std::int64_t dim, float* out,
                         cudaStream_t stream) {
    if (n_rows <= 0 || dim <= 0) return;
    switch (type) {
        case Element::f32: return launch_typed<float>(rows, n_rows, dim, out, stream);
        case Element::f16: return launch_typed<__half>(rows, n_rows, dim, out, stream);
        case Element::bf16: return launch_typed<__nv_bfloat16>(rows, n_rows, dim, out, stream);
    }
    throw KernelError("launch_max_row_norm: unknown element type");
}

}  // namespace novelty::kernels
