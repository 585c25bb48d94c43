// CUDA row normalisation against the CPU reference novelty::normalize_rows: same problems for
// every row, float32 values within 1e-6 relative, float16 values within half precision, bad
// rows unchanged. Every suite needing a device skips without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "search/cuda/normalize_rows_cuda.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/vectors.hpp"

namespace {

using novelty::RowProblem;

constexpr float f32_rel_tol = 1e-6f;

class NormalizeRowsCuda : public ::testing::Test {
protected:
    void SetUp() override {
        if (novelty::list_devices().empty()) GTEST_SKIP() << "no CUDA device";
    }
};

/// Decodes binary16 bits here rather than through novelty/util/half.hpp, so that the kernel's
/// output is checked independently of the CPU conversion code.
float half_bits_to_float(std::uint16_t bits) {
    const int sign = (bits & 0x8000) ? -1 : 1;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    if (exponent == 0x1f) {
        return mantissa != 0 ? std::numeric_limits<float>::quiet_NaN()
                             : sign * std::numeric_limits<float>::infinity();
    }
    if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
    return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

/// n_rows x dim random rows (fixed seed); rows 1..10 are made special when n_rows allows:
/// NaN, +Inf, -Inf, all zeros, all negative zeros, NaN among zeros, tiny values whose float
/// squares underflow, huge values whose float squares overflow, one non-zero, subnormals.
std::vector<float> make_rows(std::size_t n_rows, std::size_t dim, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> rows(n_rows * dim);
    for (float& v : rows) v = normal(rng);
    auto row = [&](std::size_t r) { return rows.data() + r * dim; };
    auto fill = [&](std::size_t r, float scale) {
        if (r >= n_rows) return;
        for (std::size_t i = 0; i < dim; ++i) row(r)[i] = scale * normal(rng);
    };
    const float inf = std::numeric_limits<float>::infinity();
    if (dim == 0) return rows;
    if (n_rows > 1) row(1)[dim / 2] = std::numeric_limits<float>::quiet_NaN();
    if (n_rows > 2) row(2)[dim - 1] = inf;
    if (n_rows > 3) row(3)[0] = -inf;
    if (n_rows > 4) std::fill(row(4), row(4) + dim, 0.0f);
    if (n_rows > 5) std::fill(row(5), row(5) + dim, -0.0f);
    if (n_rows > 6) {
        std::fill(row(6), row(6) + dim, 0.0f);
        row(6)[dim - 1] = std::numeric_limits<float>::quiet_NaN();
    }
    fill(7, 1e-30f);
    fill(8, 1e30f);
    if (n_rows > 9) {
        std::fill(row(9), row(9) + dim, 0.0f);
        row(9)[dim / 3] = -3.5f;
    }
    fill(10, 1e-40f);
    return rows;
}

/// The CPU reference: normalised rows and their problems.
struct Reference {
    std::vector<float> rows;
    std::vector<RowProblem> problems;
};

Reference cpu_reference(const std::vector<float>& input, std::size_t n_rows, std::size_t dim) {
    Reference ref{input, {}};
    novelty::normalize_rows(ref.rows.data(), n_rows, dim, ref.problems);
    return ref;
}

void expect_f32_matches(const std::vector<float>& input, const Reference& ref,
                        const std::vector<float>& got, const std::vector<RowProblem>& problems,
                        std::size_t n_rows, std::size_t dim) {
    ASSERT_EQ(problems.size(), n_rows);
    ASSERT_EQ(got.size(), n_rows * dim);
    std::size_t failures = 0;
    for (std::size_t r = 0; r < n_rows && failures < 20; ++r) {
        EXPECT_EQ(problems[r], ref.problems[r]) << "row " << r;
        for (std::size_t i = 0; i < dim && failures < 20; ++i) {
            const std::size_t at = r * dim + i;
            if (problems[r] != RowProblem::none) {
                if (!same_bits(got[at], input[at])) {
                    ++failures;
                    ADD_FAILURE() << "bad row " << r << " changed at " << i << ": " << input[at]
                                  << " -> " << got[at];
                }
                continue;
            }
            const float want = ref.rows[at];
            const float tol = f32_rel_tol * std::fabs(want) + std::numeric_limits<float>::min();
            if (!(std::fabs(got[at] - want) <= tol)) {
                ++failures;
                ADD_FAILURE() << "row " << r << " col " << i << ": cuda " << got[at] << " cpu "
                              << want;
            }
        }
    }
}

void expect_f16_matches(const std::vector<float>& input, const Reference& ref,
                        const std::vector<std::uint16_t>& got,
                        const std::vector<RowProblem>& problems, std::size_t n_rows,
                        std::size_t dim) {
    ASSERT_EQ(problems.size(), n_rows);
    ASSERT_EQ(got.size(), n_rows * dim);
    const float half_rel = std::ldexp(1.0f, -11) + 2 * f32_rel_tol;  // rounding + f32 error
    const float half_abs = std::ldexp(1.0f, -25);                    // half a subnormal step
    const float half_max = 65504.0f;
    std::size_t failures = 0;
    for (std::size_t r = 0; r < n_rows && failures < 20; ++r) {
        EXPECT_EQ(problems[r], ref.problems[r]) << "row " << r;
        for (std::size_t i = 0; i < dim && failures < 20; ++i) {
            const std::size_t at = r * dim + i;
            const float value = half_bits_to_float(got[at]);
            const float want = problems[r] == RowProblem::none ? ref.rows[at] : input[at];
            bool ok = false;
            if (std::isnan(want)) {
                ok = std::isnan(value);
            } else if (std::fabs(want) >= half_max + 16.0f) {  // rounds to +-Inf
                ok = std::isinf(value) && std::signbit(value) == std::signbit(want);
            } else {
                ok = std::fabs(value - want) <= half_rel * std::fabs(want) + half_abs;
            }
            if (!ok) {
                ++failures;
                ADD_FAILURE() << "row " << r << " col " << i << ": cuda f16 " << value
                              << " want " << want;
            }
        }
    }
}

void check_parity(std::size_t n_rows, std::size_t dim, unsigned seed) {
    SCOPED_TRACE(testing::Message() << n_rows << " x " << dim << ", seed " << seed);
    const std::vector<float> input = make_rows(n_rows, dim, seed);
    const Reference ref = cpu_reference(input, n_rows, dim);

    std::vector<float> got32(n_rows * dim, -7.0f);
    const auto problems32 = novelty::normalize_rows_cuda(input.data(), n_rows, dim, got32.data());
    expect_f32_matches(input, ref, got32, problems32, n_rows, dim);

    std::vector<std::uint16_t> got16(n_rows * dim, 0x7bff);
    const auto problems16 =
        novelty::normalize_rows_cuda_f16(input.data(), n_rows, dim, got16.data());
    expect_f16_matches(input, ref, got16, problems16, n_rows, dim);
}

TEST_F(NormalizeRowsCuda, MatchesCpuDim1) { check_parity(64, 1, 11); }
TEST_F(NormalizeRowsCuda, MatchesCpuDim7) { check_parity(300, 7, 12); }
TEST_F(NormalizeRowsCuda, MatchesCpuDim384) { check_parity(500, 384, 13); }
TEST_F(NormalizeRowsCuda, MatchesCpuDim1024) { check_parity(257, 1024, 14); }
TEST_F(NormalizeRowsCuda, MatchesCpuDimNotMultipleOfBlock) { check_parity(33, 1000, 15); }

// More rows than the kernel's grid (grid-stride loop) and more bytes than one host chunk.
TEST_F(NormalizeRowsCuda, MatchesCpuManyRowsInChunks) { check_parity(66000, 1024, 16); }

TEST_F(NormalizeRowsCuda, InPlace) {
    const std::size_t n_rows = 40;
    const std::size_t dim = 384;
    const std::vector<float> input = make_rows(n_rows, dim, 21);
    const Reference ref = cpu_reference(input, n_rows, dim);
    std::vector<float> rows = input;
    const auto problems = novelty::normalize_rows_cuda(rows.data(), n_rows, dim, rows.data());
    expect_f32_matches(input, ref, rows, problems, n_rows, dim);
}

TEST_F(NormalizeRowsCuda, GoodRowsHaveUnitNorm) {
    const std::size_t n_rows = 100;
    const std::size_t dim = 384;
    const std::vector<float> input = make_rows(n_rows, dim, 22);
    std::vector<float> out(n_rows * dim);
    const auto problems = novelty::normalize_rows_cuda(input.data(), n_rows, dim, out.data());
    for (std::size_t r = 0; r < n_rows; ++r) {
        if (problems[r] != RowProblem::none) continue;
        double sum = 0.0;
        for (std::size_t i = 0; i < dim; ++i) sum += double(out[r * dim + i]) * out[r * dim + i];
        EXPECT_NEAR(std::sqrt(sum), 1.0, 1e-6) << "row " << r;
    }
}

TEST_F(NormalizeRowsCuda, EmptyShapes) {
    EXPECT_TRUE(novelty::normalize_rows_cuda(nullptr, 0, 384, nullptr).empty());
    EXPECT_TRUE(novelty::normalize_rows_cuda_f16(nullptr, 0, 384, nullptr).empty());
    // dim == 0: every row has a zero norm, as in the CPU reference.
    std::vector<float> none(1, 1.0f);
    std::vector<RowProblem> cpu_problems;
    novelty::normalize_rows(none.data(), 3, 0, cpu_problems);
    EXPECT_EQ(novelty::normalize_rows_cuda(none.data(), 3, 0, none.data()), cpu_problems);
    EXPECT_EQ(none[0], 1.0f);
}

// Runs only where there is no device (such as the build machine): asking for the CUDA path
// must be a clear error, not a crash.
TEST(NormalizeRowsCudaWithoutDevice, Throws) {
    if (!novelty::list_devices().empty()) GTEST_SKIP() << "a CUDA device is present";
    std::vector<float> rows{3.0f, 4.0f};
    std::vector<float> out(2);
    EXPECT_THROW(novelty::normalize_rows_cuda(rows.data(), 1, 2, out.data()), novelty::Error);
}

}  // namespace
