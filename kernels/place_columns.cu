// See place_columns.cuh. One thread per destination entry, grid-stride.
#include "place_columns.cuh"

#include <algorithm>
#include <cmath>

#include "cuda_check.cuh"
#include "place_columns_body.cuh"

namespace novelty::kernels {
namespace {

constexpr int block_threads = 256;
constexpr std::int64_t max_blocks = 65535;

__global__ void place_columns_kernel(const float* src_vals, const std::int64_t* src_idx, std::int64_t n_rows,
                                     std::int64_t n_src, float* dst_vals, std::int64_t* dst_idx,
                                     std::int64_t dst_ld, std::int64_t dst_col, std::int64_t n_total,
                                     std::int64_t idx_offset) {
    const std::int64_t n = n_rows * n_total;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        place_column_entry(src_vals, src_idx, n_src, dst_vals, dst_idx, dst_ld, dst_col, n_total, idx_offset, i);
}

}  // namespace

void launch_place_columns(const float* src_vals, const std::int64_t* src_idx, std::int64_t n_rows,
                          std::int64_t n_src, float* dst_vals, std::int64_t* dst_idx, std::int64_t dst_ld,
                          std::int64_t dst_col, std::int64_t n_total, std::int64_t idx_offset,
                          cudaStream_t stream) {
    if (n_rows <= 0 || n_total <= 0) return;
    if (n_src > n_total) throw KernelError("launch_place_columns: more source columns than destination columns");
    const std::int64_t n = n_rows * n_total;
    const auto blocks = static_cast<unsigned>(std::min(max_blocks, (n + block_threads - 1) / block_threads));
    place_columns_kernel<<<blocks, block_threads, 0, stream>>>(src_vals, src_idx, n_rows, n_src, dst_vals, dst_idx,
                                                               dst_ld, dst_col, n_total, idx_offset);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace novelty::kernels
