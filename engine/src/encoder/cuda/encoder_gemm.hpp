// The linear layers of the CUDA encoder: y[T x out] (float32) = x[T x in] (16-bit) * W^T, W the
// PyTorch [out x in] 16-bit weight, float32 accumulation. Through cuBLASLt with its BIAS epilogue
// when it offers an algorithm for the shape, else cuBLAS GemmEx (then the caller's next kernel adds
// the bias). The models' GELU is the exact (erf) one and cuBLASLt's GELU epilogue is the tanh
// approximation, so GELU stays in the kernel that converts the intermediate to 16 bits.
// Internal to engine/src/encoder/cuda (CUDA builds only).
#pragma once

#include "element_type.cuh"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace novelty::encoder::cuda {

class EncoderGemm {
public:
    explicit EncoderGemm(kernels::Element type);
    ~EncoderGemm();
    EncoderGemm(const EncoderGemm&) = delete;
    EncoderGemm& operator=(const EncoderGemm&) = delete;

    /// y = x * W^T, plus `bias` (float32, `out` values) when the epilogue could add it. Returns
    /// true when the bias was added, false when the caller must add it.
    bool linear(const void* w, const float* bias, const void* x, std::size_t n_tokens, std::size_t in,
                std::size_t out, float* y, cudaStream_t stream);

private:
    bool linear_lt(const void* w, const float* bias, const void* x, int m, int n, int k, float* y, cudaStream_t stream);

    kernels::Element type_;
    cublasHandle_t blas_ = nullptr;
    cublasLtHandle_t lt_ = nullptr;
    void* workspace_ = nullptr;
    std::size_t workspace_bytes_ = 32u << 20;
};

}  // namespace novelty::encoder::cuda
