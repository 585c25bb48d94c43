// Cosine similarities of query rows against corpus rows with one cuBLAS GEMM: 16-bit or float32
// inputs, float32 accumulation (CUBLAS_COMPUTE_32F: no TF32 shortcut, so float32 inputs give
// float32-exact products), float32 output, or float16 output for float16 inputs (the 16-bit
// similarity tiles of docs/cuda.md: the float32 sums rounded once). Internal to
// engine/src/search/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "novelty/util/error.hpp"
#include "element_type.cuh"

struct cublasContext;

namespace novelty::cuda {

/// A cuBLAS handle, created on the current device and destroyed on scope exit.
class Cublas {
public:
    Cublas();
    ~Cublas();
    Cublas(const Cublas&) = delete;
    Cublas& operator=(const Cublas&) = delete;
    cublasContext* get() const { return handle_; }

private:
    cublasContext* handle_ = nullptr;
};

/// sims[i * ld + j] = dot(queries row i, rows row j) for i < n_queries, j < n_rows.
/// queries: n_queries x dim, rows: n_rows x dim, both row-major device matrices of `type`;
/// sims: row-major `out_type` (f32; f16 only when `type` is f16, which is what cuBLAS's
/// cublasGemmEx offers with float32 accumulation) with leading dimension ld >= n_rows. Queued on
/// `stream`. Throws novelty::Error on a cuBLAS failure, an output type cuBLAS does not pair
/// with the inputs, or sizes beyond cuBLAS's int range.
void similarity_gemm(const Cublas& cublas, cudaStream_t stream, kernels::Element type, const void* queries,
                     std::int64_t n_queries, const void* rows, std::int64_t n_rows, std::int64_t dim, void* sims,
                     std::int64_t ld, kernels::Element out_type = kernels::Element::f32);

}  // namespace novelty::cuda
