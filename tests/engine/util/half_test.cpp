// Tests for the float32 <-> float16 conversions in novelty/half.hpp.
#include "novelty/util/half.hpp"

#include "novelty/io/npy.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace novelty {
namespace {

float from_bits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

std::uint32_t to_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

bool half_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

/// Independent reference: the exact value of a half, computed with ldexp.
double reference_half_value(std::uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0x1f) return sign * std::numeric_limits<double>::infinity();
    if (exponent == 0) return sign * std::ldexp(mantissa, -24);
    return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

/// Independent reference: float -> half, rounding to nearest even, with double arithmetic.
std::uint16_t reference_to_half(float f) {
    const std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    const double a = std::fabs(static_cast<double>(f));
    if (a >= 65520.0) return sign | 0x7c00;
    if (a == 0.0) return sign;
    int e2 = 0;
    std::frexp(a, &e2);                          // a = m * 2^e2, m in [0.5, 1)
    int exponent = std::max(e2 - 1, -14);        // half exponent (subnormals share -14)
    double q = std::nearbyint(std::ldexp(a, 10 - exponent));  // ulps, ties to even
    if (q >= 2048) {
        q /= 2;
        ++exponent;
    }
    if (q < 1024) return sign | static_cast<std::uint16_t>(q);  // subnormal (exponent is -14)
    return sign | static_cast<std::uint16_t>(((exponent + 15) << 10) | (static_cast<int>(q) - 1024));
}

TEST(Half, HalfToFloatIsExactForAllBitPatterns) {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float f = half_to_float(static_cast<std::uint16_t>(h));
        if (half_is_nan(static_cast<std::uint16_t>(h))) {
            ASSERT_TRUE(std::isnan(f)) << std::hex << h;
            ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
        } else {
            ASSERT_EQ(static_cast<double>(f), reference_half_value(static_cast<std::uint16_t>(h))) << std::hex << h;
            ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
        }
    }
}

TEST(Half, RoundTripIsIdentityForAllNonNanHalves) {
    for (std::uint32_t h = 0; h < 65536; ++h) {
        if (half_is_nan(static_cast<std::uint16_t>(h))) continue;
        const float f = half_to_float(static_cast<std::uint16_t>(h));
        ASSERT_EQ(float_to_half(f), h) << std::hex << h;
        ASSERT_EQ(to_bits(half_to_float(float_to_half(f))), to_bits(f)) << std::hex << h;
    }
}

TEST(Half, MidpointsBetweenNeighboursRoundToEven) {
    // Every pair of consecutive finite positive halves, and the same with the sign set.
    for (std::uint32_t h = 0; h < 0x7bff; ++h) {
        for (std::uint32_t sign : {0u, 0x8000u}) {
            const std::uint16_t lo = static_cast<std::uint16_t>(h | sign);
            const std::uint16_t hi = static_cast<std::uint16_t>((h + 1) | sign);
            const float mid = (half_to_float(lo) + half_to_float(hi)) / 2;  // exact in float
            const std::uint16_t even = (h & 1) ? hi : lo;
            ASSERT_EQ(float_to_half(mid), even) << std::hex << h;
            ASSERT_EQ(float_to_half(std::nextafter(mid, 0.0f)), lo) << std::hex << h;
            ASSERT_EQ(float_to_half(std::nextafter(mid, sign ? -1e9f : 1e9f)), hi) << std::hex << h;
        }
    }
}

TEST(Half, TiesToEvenExamples) {
    EXPECT_EQ(float_to_half(1.0f + 0x1p-11f), 0x3c00);        // halfway to 0x3c01: even is 0x3c00
    EXPECT_EQ(float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);    // halfway to 0x3c02 from 0x3c01
    EXPECT_EQ(float_to_half(2049.0f), 0x6800);                // 2048 | 2050: even 2048
    EXPECT_EQ(float_to_half(2051.0f), 0x6802);                // 2050 | 2052: even 2052
    EXPECT_EQ(float_to_half(-2051.0f), 0xe802);
    EXPECT_EQ(float_to_half(0.1f), 0x2e66);
    EXPECT_EQ(float_to_half(1.0f / 3.0f), 0x3555);
}

TEST(Half, OverflowBecomesInfinity) {
    EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
    EXPECT_EQ(float_to_half(65519.996f), 0x7bff);
    EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
    EXPECT_EQ(float_to_half(-65520.0f), 0xfc00);
    EXPECT_EQ(float_to_half(1e10f), 0x7c00);
    EXPECT_EQ(float_to_half(std::numeric_limits<float>::max()), 0x7c00);
    EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
    EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
    EXPECT_TRUE(std::isinf(half_to_float(0x7c00)));
    EXPECT_EQ(half_to_float(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(Half, NanStaysNan) {
    for (std::uint32_t bits : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, 0xff800001u, 0x7fffffffu}) {
        const std::uint16_t h = float_to_half(from_bits(bits));
        EXPECT_TRUE(half_is_nan(h)) << std::hex << bits << " -> " << h;
        EXPECT_EQ(h & 0x0200u, 0x0200u) << "quiet bit, " << std::hex << bits;
        EXPECT_EQ((h & 0x8000u) != 0, (bits & 0x80000000u) != 0) << std::hex << bits;
        EXPECT_TRUE(std::isnan(half_to_float(h)));
    }
    EXPECT_TRUE(half_is_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Half, SubnormalsAndZeros) {
    EXPECT_EQ(float_to_half(0.0f), 0x0000);
    EXPECT_EQ(float_to_half(-0.0f), 0x8000);
    EXPECT_EQ(to_bits(half_to_float(0x8000)), 0x80000000u);
    EXPECT_EQ(float_to_half(0x1p-24f), 0x0001);                // smallest subnormal
    EXPECT_EQ(float_to_half(0x1p-25f), 0x0000);                // tie with 0: even is 0
    EXPECT_EQ(float_to_half(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
    EXPECT_EQ(float_to_half(-0x1p-26f), 0x8000);
    EXPECT_EQ(float_to_half(1.5f * 0x1p-24f), 0x0002);         // tie 1 | 2: even 2
    EXPECT_EQ(float_to_half(2.5f * 0x1p-24f), 0x0002);         // tie 2 | 3: even 2
    EXPECT_EQ(float_to_half(0x1p-14f - 0x1p-24f), 0x03ff);     // largest subnormal
    EXPECT_EQ(float_to_half(0x1p-14f - 0x1p-25f), 0x0400);     // tie 0x3ff | 0x400: even 0x400
    EXPECT_EQ(float_to_half(0x1p-14f), 0x0400);                // smallest normal
    EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
    EXPECT_EQ(float_to_half(-std::numeric_limits<float>::min()), 0x8000);
    EXPECT_EQ(half_to_float(0x0001), 0x1p-24f);
    EXPECT_EQ(half_to_float(0x83ff), -(0x1p-14f - 0x1p-24f));
}

TEST(Half, RandomFloatsMatchReferenceRounding) {
    std::mt19937 rng(12345);
    for (int i = 0; i < 2000000; ++i) {
        std::uint32_t bits = rng();
        if (i % 2) bits = (bits & 0x87ffffffu) | 0x30000000u;  // concentrate on the half range
        const float f = from_bits(bits);
        if (std::isnan(f)) continue;
        ASSERT_EQ(float_to_half(f), reference_to_half(f)) << std::hex << bits;
    }
}

TEST(Half, MatchesNumpyConversion) {
    const NpyMatrix in = NpyMatrix::open(test::fixture("npy/half_cases_f32.npy"));
    const NpyMatrix out = NpyMatrix::open(test::fixture("npy/half_cases_f16.npy"));
    ASSERT_EQ(in.dtype(), DType::f32);
    ASSERT_EQ(out.dtype(), DType::f16);
    ASSERT_EQ(in.rows(), out.rows());
    ASSERT_GE(in.rows(), 300u);
    const auto* f = static_cast<const float*>(in.data());
    const auto* h = static_cast<const std::uint16_t*>(out.data());
    for (std::size_t i = 0; i < in.rows(); ++i) {
        ASSERT_FALSE(std::isnan(f[i]));
        EXPECT_EQ(float_to_half(f[i]), h[i]) << i << ": " << f[i];
        EXPECT_EQ(reference_to_half(f[i]), h[i]) << i << ": " << f[i];
    }
}

}  // namespace
}  // namespace novelty
