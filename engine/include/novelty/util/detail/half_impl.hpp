// Inline definitions of float_to_half / half_to_float (declared in novelty/util/half.hpp). Pure bit
// manipulation with no library calls, so the same code compiles for the host and, under nvcc,
// for the device.
#pragma once

#include <cstdint>

#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

namespace novelty {
namespace detail {

/// The IEEE 754 bits of a float32.
NOVELTY_HOST_DEVICE inline std::uint32_t float_bits(float value) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(value);
#else
    return std::bit_cast<std::uint32_t>(value);
#endif
}

/// The float32 whose IEEE 754 bits are `bits`.
NOVELTY_HOST_DEVICE inline float bits_float(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    return std::bit_cast<float>(bits);
#endif
}

}  // namespace detail

NOVELTY_HOST_DEVICE inline std::uint16_t float_to_half(float value) {
    const std::uint32_t x = detail::float_bits(value);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t ax = x & 0x7fffffffu;  // magnitude bits

    if (ax >= 0x7f800000u) {  // infinity or NaN
        if (ax == 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
        // NaN: keep the top payload bits and force the quiet bit, so it never becomes inf.
        return static_cast<std::uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    }
    // 65520 lies halfway between 65504 (largest half, odd mantissa) and 65536, so it and
    // everything above rounds to infinity.
    if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);

    if (ax >= 0x38800000u) {  // >= 2^-14: a normal half
        // Rebias the exponent (127 -> 15) and drop 13 mantissa bits, rounding ties to even.
        // A carry out of the mantissa correctly bumps the exponent.
        std::uint32_t h = (ax - 0x38000000u) >> 13;
        const std::uint32_t rest = ax & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }

    // Subnormal half (or zero): the result is round(|value| / 2^-24).
    const std::uint32_t exponent = ax >> 23;
    if (exponent < 102) return static_cast<std::uint16_t>(sign);  // < 2^-25: rounds to zero
    const std::uint32_t mantissa = (ax & 0x7fffffu) | 0x800000u;  // implicit leading one
    const std::uint32_t shift = 126 - exponent;                    // 14 .. 24
    std::uint32_t h = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (h & 1u))) ++h;  // may carry into 2^-14: fine
    return static_cast<std::uint16_t>(sign | h);
}

NOVELTY_HOST_DEVICE inline float half_to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1fu;
    const std::uint32_t mantissa = bits & 0x3ffu;

    if (exponent == 0x1fu)  // infinity or NaN (payload kept)
        return detail::bits_float(sign | 0x7f800000u | (mantissa << 13));
    if (exponent != 0)  // normal: rebias 15 -> 127
        return detail::bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    // Zero or subnormal: mantissa * 2^-24, exact in float32 (a normal float for mantissa > 0).
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return detail::bits_float(sign | detail::float_bits(magnitude));
}

}  // namespace novelty
