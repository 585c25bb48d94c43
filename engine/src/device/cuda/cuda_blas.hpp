// cuBLAS and cuBLASLt behind dev::Blas (device.hpp), CUDA builds only.
#pragma once

#include <memory>

#include "device/device.hpp"

namespace novelty::dev {

/// Handles created on the current device.
std::unique_ptr<Blas> make_cuda_blas();

}  // namespace novelty::dev
