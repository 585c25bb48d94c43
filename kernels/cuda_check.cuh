// CUDA runtime and cuBLAS status checks that turn failures into kernels::KernelError.
//
// Internal to kernels/ and engine/src/search/cuda/: never include this from a public header under
// engine/include/novelty (it pulls in the CUDA runtime headers). Host code only; the macros
// evaluate their argument exactly once. The kernels include no engine header: KernelError is a
// std::runtime_error, which the CLI and the server report as a failure (exit code 1, HTTP 500),
// as they do novelty::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include <stdexcept>

#if __has_include(<cublas_api.h>)
#include <cublas_api.h>
#define NOVELTY_HAVE_CUBLAS_HEADERS 1
#endif

namespace novelty::kernels {

/// A failed CUDA runtime or cuBLAS call; the message names the call, the file and the line.
class KernelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace novelty::kernels

namespace novelty::detail {

/// Builds "CUDA error in <call> at <file>:<line>: <message>" and throws it as KernelError.
[[noreturn]] inline void throw_cuda_error(const char* kind, const char* call, const char* file,
                                          int line, const char* message) {
    throw kernels::KernelError(std::string(kind) + " error in " + call + " at " + file + ":" +
                std::to_string(line) + ": " + message);
}

#if defined(NOVELTY_HAVE_CUBLAS_HEADERS)
/// The name of a cuBLAS status, spelled out here so that no cuBLAS library call is needed.
inline const char* cublas_status_string(cublasStatus_t status) {
    switch (status) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "unknown cuBLAS status";
}
#endif

}  // namespace novelty::detail

/// Runs a CUDA runtime call; on any status other than cudaSuccess throws kernels::KernelError
/// "CUDA error in <call> at <file>:<line>: <cudaGetErrorString(status)>".
#define NOVELTY_CUDA_CHECK(call)                                                              \
    do {                                                                                      \
        const cudaError_t novelty_cuda_status_ = (call);                                      \
        if (novelty_cuda_status_ != cudaSuccess) {                                            \
            ::novelty::detail::throw_cuda_error("CUDA", #call, __FILE__, __LINE__,            \
                                                cudaGetErrorString(novelty_cuda_status_));    \
        }                                                                                     \
    } while (0)

#if defined(NOVELTY_HAVE_CUBLAS_HEADERS)
/// Runs a cuBLAS call; on any status other than CUBLAS_STATUS_SUCCESS throws kernels::KernelError
/// "cuBLAS error in <call> at <file>:<line>: <status name>".
#define NOVELTY_CUBLAS_CHECK(call)                                                            \
    do {                                                                                      \
        const cublasStatus_t novelty_cublas_status_ = (call);                                 \
        if (novelty_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                \
            ::novelty::detail::throw_cuda_error(                                              \
                "cuBLAS", #call, __FILE__, __LINE__,                                          \
                ::novelty::detail::cublas_status_string(novelty_cublas_status_));             \
        }                                                                                     \
    } while (0)
#endif
