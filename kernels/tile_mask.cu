// See tile_mask.cuh. One block per tile row: the threads clear the columns past the row limit,
// before the row begin and outside the row filter;
// thread 0 clears the self column and the excluded columns (a handful per query).
#include "tile_mask.cuh"

#include <cuda_fp16.h>

#include <cmath>
#include <limits>

#include "cuda_check.cuh"

namespace novelty::kernels {
namespace {

constexpr int block_threads = 256;

__device__ inline void minus_infinity(float& out) { out = -INFINITY; }
__device__ inline void minus_infinity(__half& out) { out = __ushort_as_half(0xFC00u); }

template <typename T>
__global__ void mask_tile_kernel(T* sims, std::int64_t n_cols, std::int64_t ld, TileMask mask) {
    const std::int64_t r = blockIdx.x;
    T* row = sims + r * ld;
    T minus_inf;
    minus_infinity(minus_inf);
    for (std::int64_t c = mask_limit_column(mask, r, n_cols) + threadIdx.x; c < n_cols; c += blockDim.x)
        row[c] = minus_inf;
    const std::int64_t end_masked = mask_begin_column(mask, r, n_cols);
    for (std::int64_t c = threadIdx.x; c < end_masked; c += blockDim.x) row[c] = minus_inf;
    if (mask_has_filter(mask, r)) {
        for (std::int64_t c = threadIdx.x; c < n_cols; c += blockDim.x)
            if (!mask_filter_allows(mask, r, c)) row[c] = minus_inf;
    }
    if (threadIdx.x != 0) return;
    mask_single_columns(mask, r, n_cols, [&](std::int64_t c) { row[c] = minus_inf; });
}

template <typename T>
void launch_typed(T* sims, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld, const TileMask& mask,
                  cudaStream_t stream) {
    if (n_queries <= 0 || n_cols <= 0) return;
    if (n_queries > 0x7fffffff) throw KernelError("launch_mask_tile: too many tile rows for one launch");
    mask_tile_kernel<T><<<static_cast<unsigned>(n_queries), block_threads, 0, stream>>>(sims, n_cols, ld, mask);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_mask_tile(float* sims, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                      const TileMask& mask, cudaStream_t stream) {
    launch_typed(sims, n_queries, n_cols, ld, mask, stream);
}

void launch_mask_tile_f16(void* sims, std::int64_t n_queries, std::int64_t n_cols, std::int64_t ld,
                          const TileMask& mask, cudaStream_t stream) {
    launch_typed(static_cast<__half*>(sims), n_queries, n_cols, ld, mask, stream);
}

}  // namespace novelty::kernels
