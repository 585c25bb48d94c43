// The CUDA encoder's stand-in for CPU-only builds (CMake compiles it only without CUDA; the real
// one is engine/src/encoder/cuda/cuda_encoder.cpp).
#include "encoder/cuda_encoder.hpp"

#include "novelty/util/error.hpp"

namespace novelty::encoder {

std::unique_ptr<Embedder> make_cuda_encoder(const std::string&, const EncoderOptions&) {
    throw UsageError("the CUDA encoder is not available: CUDA was not compiled into this build", "device");
}

}  // namespace novelty::encoder
