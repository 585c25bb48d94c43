// The margin of the CUDA backend's 16-bit similarity tiles (engine/src/search/tile_margin.hpp),
// checked on the CPU: each error term covers its error on its own where that term dominates,
// and the whole margin covers the composed error of random and adversarial pairs, the device's
// arithmetic emulated in float32 and float16 on the host.
#include "search/tile_margin.hpp"
#include "novelty/util/half.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace novelty {
namespace {

float to_half(float x) { return half_to_float(float_to_half(x)); }

std::vector<float> random_unit(std::size_t dim, std::mt19937& gen) {
    std::normal_distribution<float> normal;
    std::vector<float> v(dim);
    double norm = 0;
    for (auto& x : v) {
        x = normal(gen);
        norm += double(x) * x;
    }
    for (auto& x : v) x = static_cast<float>(x / std::sqrt(norm));
    return v;
}

TEST(TileMargin, HalfSpacing) {
    EXPECT_EQ(half_ulp_at(1.0), std::ldexp(1.0, -10));
    EXPECT_EQ(half_ulp_at(-1.5), std::ldexp(1.0, -10));
    EXPECT_EQ(half_ulp_at(0.75), std::ldexp(1.0, -11));
    EXPECT_EQ(half_ulp_at(0.5), std::ldexp(1.0, -11));
    EXPECT_EQ(half_ulp_at(1e-6), std::ldexp(1.0, -24));
    EXPECT_TRUE(std::isinf(half_ulp_at(70000.0)));
}

TEST(TileMargin, SizesAndOrder) {
    TileMarginInputs in;
    in.dim = 1024;
    const float f16 = similarity_tile_margin(in);
    // Query rounding (2^-11) and output rounding at 1 (2^-10) at least; about 1.9e-3 in all.
    EXPECT_GE(f16, std::ldexp(1.0f, -10) + std::ldexp(1.0f, -11));
    EXPECT_LT(f16, 2.5e-3f);
    in.half_tile = false;
    EXPECT_LT(similarity_tile_margin(in), f16);  // a float32 tile has no output rounding
    in.half_tile = true;
    in.storage = ElementType::bf16;
    EXPECT_GT(similarity_tile_margin(in), f16);
    in.storage = ElementType::f32;
    EXPECT_LT(similarity_tile_margin(in), f16);
    in.storage = ElementType::f16;
    in.dim = 384;
    EXPECT_LT(similarity_tile_margin(in), f16);
    in.dim = 1024;
    in.max_row_norm = 2.0;
    EXPECT_GT(similarity_tile_margin(in), f16);
    in.max_row_norm = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(std::isinf(similarity_tile_margin(in)));
    in.max_row_norm = 70000.0;  // similarities past float16's range
    EXPECT_TRUE(std::isinf(similarity_tile_margin(in)));
}

TEST(TileMargin, OutputRoundingAloneIsCovered) {
    // One dimension, float32 storage: rounding G to float16 is the only error that matters.
    TileMarginInputs in;
    in.dim = 1;
    in.storage = ElementType::f32;
    const float margin = similarity_tile_margin(in);
    EXPECT_LT(margin, std::ldexp(1.0f, -9));
    double worst = 0;
    for (int i = -200000; i <= 200000; ++i) {
        const float x = static_cast<float>(i) / 200000.0f * 1.0000001f;
        worst = std::max(worst, std::fabs(double(to_half(x)) - x));
    }
    EXPECT_GE(worst, std::ldexp(1.0, -12));  // half a float16 spacing below 1 is reached
    EXPECT_LE(worst, margin);
}

TEST(TileMargin, QueryRoundingAloneIsCovered) {
    // Eight dimensions, a float32 tile: rounding the query to float16 dominates; the worst row
    // for a query is its own rounding error's direction.
    TileMarginInputs in;
    in.dim = 8;
    in.half_tile = false;
    in.max_row_norm = 1.0 + 1e-6;
    const float margin = similarity_tile_margin(in);
    std::mt19937 gen(3);
    double worst = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        const auto q = random_unit(in.dim, gen);
        std::vector<double> e(in.dim);
        double norm = 0;
        for (std::size_t i = 0; i < in.dim; ++i) {
            e[i] = double(to_half(q[i])) - q[i];
            norm += e[i] * e[i];
        }
        worst = std::max(worst, std::sqrt(norm));  // |e . r| for r = e / ||e||
    }
    EXPECT_GT(worst, std::ldexp(1.0, -13));
    EXPECT_LE(worst, margin);
}

/// |a - g| for one pair, the device emulated: the GEMM on the float16-rounded query, summed in
/// float32 in reverse order and then rounded to float16; the re-scoring in float32 in order.
double tile_error(const std::vector<float>& q, const std::vector<float>& r) {
    float gemm = 0, rescored = 0;
    for (std::size_t i = r.size(); i-- > 0;) gemm = std::fma(to_half(q[i]), r[i], gemm);
    for (std::size_t i = 0; i < r.size(); ++i) rescored = std::fma(q[i], r[i], rescored);
    return std::fabs(double(to_half(gemm)) - rescored);
}

TEST(TileMargin, ComposedErrorOfRandomAndNearlyEqualPairsIsCovered) {
    std::mt19937 gen(5);
    for (const std::size_t dim : {std::size_t{384}, std::size_t{1024}}) {
        double worst = 0, max_norm = 0;
        std::vector<std::pair<std::vector<float>, std::vector<float>>> pairs;
        for (int trial = 0; trial < 3000; ++trial) {
            const auto q = random_unit(dim, gen);
            // A third of the rows are the query itself (similarity near 1), a third lie at
            // similarities in [0.5, 1) (float16 spacing 2^-11 there), a third are random.
            auto r = trial % 3 == 0 ? q : random_unit(dim, gen);
            if (trial % 3 == 1) {
                const double sim = 0.5 + 0.5 * std::uniform_real_distribution<double>()(gen);
                double along = 0, norm = 0;
                for (std::size_t c = 0; c < dim; ++c) along += double(r[c]) * q[c];
                for (std::size_t c = 0; c < dim; ++c) norm += (r[c] - along * q[c]) * (r[c] - along * q[c]);
                for (std::size_t c = 0; c < dim; ++c)
                    r[c] = static_cast<float>(sim * q[c] + std::sqrt(1 - sim * sim) * (r[c] - along * q[c]) / std::sqrt(norm));
            }
            double norm = 0;
            for (auto& x : r) {
                x = to_half(x);  // stored rows are float16
                norm += double(x) * x;
            }
            max_norm = std::max(max_norm, std::sqrt(norm));
            worst = std::max(worst, tile_error(q, r));
        }
        TileMarginInputs in;
        in.dim = dim;
        in.max_row_norm = max_norm;
        EXPECT_GT(worst, std::ldexp(1.0, -13)) << "dim " << dim;  // the float16 rounding is reached
        EXPECT_LE(worst, similarity_tile_margin(in)) << "dim " << dim;
    }
}

}  // namespace
}  // namespace novelty
