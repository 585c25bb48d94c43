// The CUDA backend's stand-in for CPU-only builds (CMake compiles it only without CUDA; the real
// one is engine/src/search/cuda/cuda_backend.cpp).
#include "novelty/search/backends.hpp"
#include "novelty/util/error.hpp"

namespace novelty {

std::unique_ptr<SearchBackend> make_cuda_backend(const CudaBackendOptions&) {
    throw UsageError("the CUDA backend is not available: CUDA was not compiled into this build");
}

}  // namespace novelty
