#include "search/cuda/similarity_gemm.hpp"
#include "novelty/util/error.hpp"

#include <cublas_v2.h>

#include <limits>
#include <string>

#include "cuda_check.cuh"

namespace novelty::cuda {

namespace {

cudaDataType_t data_type(kernels::Element type) {
    switch (type) {
        case kernels::Element::f32: return CUDA_R_32F;
        case kernels::Element::f16: return CUDA_R_16F;
        case kernels::Element::bf16: return CUDA_R_16BF;
    }
    throw Error("similarity_gemm: unknown element type");
}

int as_int(std::int64_t value, const char* what) {
    if (value < 0 || value > std::numeric_limits<int>::max())
        throw Error(std::string("similarity_gemm: ") + what + " " + std::to_string(value) + " is beyond cuBLAS's range");
    return static_cast<int>(value);
}

}  // namespace

Cublas::Cublas() { NOVELTY_CUBLAS_CHECK(cublasCreate(&handle_)); }

Cublas::~Cublas() {
    if (handle_ != nullptr) cublasDestroy(handle_);
}

void similarity_gemm(const Cublas& cublas, cudaStream_t stream, kernels::Element type, const void* queries,
                     std::int64_t n_queries, const void* rows, std::int64_t n_rows, std::int64_t dim, void* sims,
                     std::int64_t ld, kernels::Element out_type) {
    if (out_type != kernels::Element::f32 && out_type != type)
        throw Error("similarity_gemm: cuBLAS writes float32, or the inputs' own 16-bit type, with float32 accumulation");
    if (out_type == kernels::Element::bf16) throw Error("similarity_gemm: bfloat16 tiles are not supported");
    if (n_queries == 0 || n_rows == 0) return;
    const int m = as_int(n_rows, "corpus rows");
    const int n = as_int(n_queries, "queries");
    const int k = as_int(dim, "dimension");
    const int ldc = as_int(ld, "leading dimension");
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const cudaDataType_t in_type = data_type(type);
    NOVELTY_CUBLAS_CHECK(cublasSetStream(cublas.get(), stream));
    // Row-major sims (n_queries x n_rows) is column-major sims^T = rows * queries^T. The
    // row-major inputs read as column-major are rows^T (dim x n_rows) and queries^T.
    NOVELTY_CUBLAS_CHECK(cublasGemmEx(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, rows, in_type, k,
                                      queries, in_type, k, &beta, sims, data_type(out_type), ldc, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
}

}  // namespace novelty::cuda
