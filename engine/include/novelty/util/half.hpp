// IEEE 754 binary16 conversions shared by the CPU code and the CUDA kernels.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define NOVELTY_HOST_DEVICE __host__ __device__
#else
#define NOVELTY_HOST_DEVICE
#endif

namespace novelty {

/// float32 -> binary16 bits, rounding to nearest, ties to even. Values too large become
/// infinity, NaN stays NaN (quiet), subnormals are kept.
NOVELTY_HOST_DEVICE std::uint16_t float_to_half(float value);
/// binary16 bits -> float32, exact.
NOVELTY_HOST_DEVICE float half_to_float(std::uint16_t bits);

}  // namespace novelty

#include "novelty/util/detail/half_impl.hpp"
