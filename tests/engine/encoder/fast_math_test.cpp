// The encoder's element-wise functions (engine/src/encoder/fast_math.hpp) against double-precision
// references: exp, the erf GELU and the row softmax, on lengths that are and are not multiples of
// their 8 lanes (the tails take another path), with large, small and negative values.
#include "encoder/fast_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace novelty::encoder;

namespace {

std::vector<float> values(std::size_t n, float scale, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

}  // namespace

TEST(FastMath, ExpIsWithinItsStatedRelativeError) {
    for (std::size_t n : {1u, 7u, 8u, 9u, 100u}) {
        std::vector<float> x = values(n, 20.0f, static_cast<std::uint32_t>(n)), out(n);
        exp_array(x.data(), out.data(), n);
        for (std::size_t i = 0; i < n; ++i) {
            const double want = std::exp(std::min(88.0, std::max(-87.0, double(x[i]))));
            EXPECT_NEAR(out[i], want, 2e-7 * want + 1e-38) << "n " << n << " x " << x[i];
        }
    }
}

TEST(FastMath, GeluIsTheErfGelu) {
    for (std::size_t n : {1u, 5u, 16u, 19u, 333u}) {
        std::vector<float> x = values(n, 4.0f, static_cast<std::uint32_t>(100 + n));
        const std::vector<float> in = x;
        gelu_in_place(x.data(), n);
        for (std::size_t i = 0; i < n; ++i) {
            const double v = in[i], want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
            EXPECT_NEAR(x[i], want, 1e-6 * std::fabs(v) + 1e-7) << "x " << v;
        }
    }
}

// Rows of 1 to 70 values (the 8-lane body, the tail, both), spread wide enough that the largest
// value dominates some rows: each value near the exact softmax (of the float32 inputs), each row
// summing to 1.
TEST(FastMath, SoftmaxRowsAreNearTheExactSoftmax) {
    for (std::size_t cols = 1; cols <= 70; ++cols) {
        const std::size_t rows = 3;
        std::vector<float> x = values(rows * cols, cols % 2 ? 3.0f : 30.0f, static_cast<std::uint32_t>(cols));
        const std::vector<float> in = x;
        softmax_rows(x.data(), rows, cols);
        for (std::size_t r = 0; r < rows; ++r) {
            double max = in[r * cols], sum = 0, got_sum = 0;
            for (std::size_t c = 0; c < cols; ++c) max = std::max(max, double(in[r * cols + c]));
            for (std::size_t c = 0; c < cols; ++c) sum += std::exp(double(in[r * cols + c]) - max);
            for (std::size_t c = 0; c < cols; ++c) {
                const double gap = max - in[r * cols + c], want = std::exp(-gap) / sum;
                // float32's x - max is off by up to gap * 2^-24, which exp turns into that relative error.
                ASSERT_NEAR(x[r * cols + c], want, (1e-6 + 1.2e-7 * gap) * want + 1e-30)
                    << "cols " << cols << " row " << r << " col " << c;
                got_sum += x[r * cols + c];
            }
            EXPECT_NEAR(got_sum, 1.0, 1e-5) << "cols " << cols;
        }
    }
}
