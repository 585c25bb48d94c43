// cuBLAS / cuBLASLt GEMMs of the real device. Similarity tiles: cublasGemmEx with float32
// accumulation (CUBLAS_COMPUTE_32F: no TF32 shortcut). Linear layers: cuBLASLt with its BIAS
// epilogue when it offers an algorithm for the shape, else cublasGemmEx and the caller adds the
// bias (the models' GELU is the exact erf one; cuBLASLt's GELU epilogue is the tanh form).
#include "device/cuda/cuda_blas.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <limits>
#include <string>

#include "cuda_check.cuh"
#include "novelty/util/error.hpp"

namespace novelty::dev {

namespace {

cudaStream_t raw(Stream stream) { return reinterpret_cast<cudaStream_t>(stream); }

cudaDataType_t data_type(Element type) {
    switch (type) {
        case Element::f32: return CUDA_R_32F;
        case Element::f16: return CUDA_R_16F;
        case Element::bf16: return CUDA_R_16BF;
    }
    throw Error("GEMM: unknown element type");
}

int as_int(std::int64_t value, const char* what) {
    if (value < 0 || value > std::numeric_limits<int>::max())
        throw Error(std::string("GEMM: ") + what + " " + std::to_string(value) + " is beyond cuBLAS's range");
    return static_cast<int>(value);
}

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

class CudaBlas final : public Blas {
public:
    CudaBlas() {
        NOVELTY_CUBLAS_CHECK(cublasCreate(&blas_));
        NOVELTY_CUBLAS_CHECK(cublasLtCreate(&lt_));
    }
    ~CudaBlas() override {
        if (workspace_) cudaFree(workspace_);
        if (lt_) cublasLtDestroy(lt_);
        if (blas_) cublasDestroy(blas_);
    }
    CudaBlas(const CudaBlas&) = delete;
    CudaBlas& operator=(const CudaBlas&) = delete;

    void similarity(Stream stream, Element type, const void* queries_d, std::int64_t n_queries, const void* rows_d,
                    std::int64_t n_rows, std::int64_t dim, void* sims_d, std::int64_t ld, Element out_type) override {
        if (out_type != Element::f32 && out_type != type)
            throw Error("similarity_gemm: cuBLAS writes float32, or the inputs' own 16-bit type, with float32 accumulation");
        if (out_type == Element::bf16) throw Error("similarity_gemm: bfloat16 tiles are not supported");
        if (n_queries == 0 || n_rows == 0) return;
        const int m = as_int(n_rows, "corpus rows"), n = as_int(n_queries, "queries"), k = as_int(dim, "dimension");
        const int ldc = as_int(ld, "leading dimension");
        const float alpha = 1.0f, beta = 0.0f;
        const cudaDataType_t in_type = data_type(type);
        NOVELTY_CUBLAS_CHECK(cublasSetStream(blas_, raw(stream)));
        // Row-major sims (n_queries x n_rows) is column-major sims^T = rows * queries^T; the
        // row-major inputs read as column-major are rows^T (dim x n_rows) and queries^T.
        NOVELTY_CUBLAS_CHECK(cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, rows_d, in_type, k, queries_d,
                                          in_type, k, &beta, sims_d, data_type(out_type), ldc, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT));
    }

    bool linear(Stream stream, Element type, const void* w_d, const float* bias_d, const void* x_d, std::size_t n_tokens,
                std::size_t in, std::size_t out, float* y_d) override {
        const int m = static_cast<int>(out), n = static_cast<int>(n_tokens), k = static_cast<int>(in);
        if (n == 0) return true;
        if (bias_d != nullptr && linear_lt(stream, type, w_d, bias_d, x_d, m, n, k, y_d)) return true;
        const float alpha = 1.0f, beta = 0.0f;
        const cudaDataType_t in_type = data_type(type);
        NOVELTY_CUBLAS_CHECK(cublasSetStream(blas_, raw(stream)));
        NOVELTY_CUBLAS_CHECK(cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, w_d, in_type, k, x_d, in_type,
                                          k, &beta, y_d, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return bias_d == nullptr;
    }

private:
    // Column-major view: Y^T [out x T] = op_T(W stored [in x out]) * X^T [in x T].
    bool linear_lt(Stream stream, Element type, const void* w, const float* bias, const void* x, int m, int n, int k,
                   float* y) {
        if (workspace_ == nullptr) NOVELTY_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
        LtDescriptors d;
        const cudaDataType_t in_type = data_type(type);
        if (cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return false;
        const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
        const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
        const cudaDataType_t bias_type = CUDA_R_32F;
        auto set = [&](cublasLtMatmulDescAttributes_t attribute, const void* value, std::size_t bytes) {
            return cublasLtMatmulDescSetAttribute(d.op, attribute, value, bytes) == CUBLAS_STATUS_SUCCESS;
        };
        bool ok = set(CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa) &&
                  set(CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb) &&
                  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue) &&
                  set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) &&
                  set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type) &&
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
                                            workspace_, workspace_bytes_, raw(stream)));
        return true;
    }

    cublasHandle_t blas_ = nullptr;
    cublasLtHandle_t lt_ = nullptr;
    void* workspace_ = nullptr;
    std::size_t workspace_bytes_ = 32u << 20;
};

}  // namespace

std::unique_ptr<Blas> make_cuda_blas() { return std::make_unique<CudaBlas>(); }

}  // namespace novelty::dev
