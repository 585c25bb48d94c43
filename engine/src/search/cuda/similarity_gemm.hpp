// Cosine similarities of query rows against corpus rows with one cuBLAS GEMM: 16-bit or float32
// inputs, float32 accumulation and output (CUBLAS_COMPUTE_32F: no TF32 shortcut, so float32
// inputs give float32-exact products). Internal to engine/src/search/cuda.
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
/// sims: row-major float32 with leading dimension ld >= n_rows. Queued on `stream`.
/// Throws novelty::Error on a cuBLAS failure or sizes beyond cuBLAS's int range.
void similarity_gemm(const Cublas& cublas, cudaStream_t stream, kernels::Element type, const void* queries,
                     std::int64_t n_queries, const void* rows, std::int64_t n_rows, std::int64_t dim, float* sims,
                     std::int64_t ld);

}  // namespace novelty::cuda
