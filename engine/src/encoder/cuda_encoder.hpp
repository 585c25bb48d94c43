// The CUDA text encoder's entry point (engine/src/encoder/cuda/, CUDA builds only; a CPU-only
// build defines a stand-in that throws). Internal to the engine.
#pragma once

#include "novelty/encoder/embedder.hpp"
#include "novelty/encoder/text_encoder.hpp"

#include <memory>
#include <string>

namespace novelty::encoder {

/// Loads `model_dir` onto the current CUDA device (see EncoderOptions for the device settings).
/// The caller has checked that a device is present.
std::unique_ptr<Embedder> make_cuda_encoder(const std::string& model_dir, const EncoderOptions& options);

}  // namespace novelty::encoder
