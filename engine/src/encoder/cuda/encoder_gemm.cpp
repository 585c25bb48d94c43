#include "encoder/cuda/encoder_gemm.hpp"

#include "cuda_check.cuh"

namespace novelty::encoder::cuda {

namespace {

cudaDataType_t data_type(kernels::Element type) { return type == kernels::Element::bf16 ? CUDA_R_16BF : CUDA_R_16F; }

/// Owners of the cuBLASLt descriptors of one call.
struct LtDescriptors {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulPreference_t preference = nullptr;
    ~LtDescriptors() {
        if (preference) cublasLtMatmulPreferenceDestroy(preference);
        if (c) cublasLtMatrixLayoutDestroy(c);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

}  // namespace

EncoderGemm::EncoderGemm(kernels::Element type) : type_(type) {
    NOVELTY_CUBLAS_CHECK(cublasCreate(&blas_));
    NOVELTY_CUBLAS_CHECK(cublasLtCreate(&lt_));
    NOVELTY_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

EncoderGemm::~EncoderGemm() {
    if (workspace_) cudaFree(workspace_);
    if (lt_) cublasLtDestroy(lt_);
    if (blas_) cublasDestroy(blas_);
}

// Column-major view: Y^T [out x T] = op_T(W stored [in x out]) * X^T [in x T].
bool EncoderGemm::linear_lt(const void* w, const float* bias, const void* x, int m, int n, int k, float* y,
                            cudaStream_t stream) {
    LtDescriptors d;
    const cudaDataType_t in_type = data_type(type_);
    if (cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return false;
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType_t bias_type = CUDA_R_32F;
    bool ok = cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatrixLayoutCreate(&d.a, in_type, k, m, k) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatrixLayoutCreate(&d.b, in_type, k, n, k) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatrixLayoutCreate(&d.c, CUDA_R_32F, m, n, m) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulPreferenceCreate(&d.preference) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatmulPreferenceSetAttribute(d.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &workspace_bytes_, sizeof workspace_bytes_) == CUBLAS_STATUS_SUCCESS;
    if (!ok) return false;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (cublasLtMatmulAlgoGetHeuristic(lt_, d.op, d.a, d.b, d.c, d.c, d.preference, 1, &result, &found) !=
            CUBLAS_STATUS_SUCCESS ||
        found == 0)
        return false;
    const float alpha = 1.0f, beta = 0.0f;
    NOVELTY_CUBLAS_CHECK(cublasLtMatmul(lt_, d.op, &alpha, w, d.a, x, d.b, &beta, y, d.c, y, d.c, &result.algo,
                                        workspace_, workspace_bytes_, stream));
    return true;
}

bool EncoderGemm::linear(const void* w, const float* bias, const void* x, std::size_t n_tokens, std::size_t in,
                         std::size_t out, float* y, cudaStream_t stream) {
    const int m = static_cast<int>(out), n = static_cast<int>(n_tokens), k = static_cast<int>(in);
    if (n == 0) return true;
    if (bias != nullptr && linear_lt(w, bias, x, m, n, k, y, stream)) return true;
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t in_type = data_type(type_);
    NOVELTY_CUBLAS_CHECK(cublasSetStream(blas_, stream));
    NOVELTY_CUBLAS_CHECK(cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, w, in_type, k, x, in_type, k,
                                      &beta, y, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return bias == nullptr;
}

}  // namespace novelty::encoder::cuda
