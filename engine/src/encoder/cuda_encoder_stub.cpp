// The CUDA encoder's stand-in for CPU-only builds.
#include "encoder/cuda_encoder.hpp"

#include "novelty/util/error.hpp"

namespace novelty::encoder {

#if !defined(NOVELTY_WITH_CUDA)
std::unique_ptr<Embedder> make_cuda_encoder(const std::string&, const EncoderOptions&) {
    throw UsageError("the CUDA encoder is not available: CUDA was not compiled into this build", "device");
}
#endif

}  // namespace novelty::encoder
