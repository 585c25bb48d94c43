// The int8 products (engine/src/util/int8_gemm.hpp): the quantization, the exact integer sums of
// both layouts against a 64-bit reference (sums past 2^24 included, where the float32 path's
// slicing is what keeps them exact), every CPU path's kernel (AMX, AVX512-VNNI, AVX-VNNI, AVX2, the
// portable loop) against the reference bit for bit on each machine that runs it (skipped where the
// CPU lacks the instructions), and the input factors.
#include "util/int8_gemm.hpp"
#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace novelty {
namespace {

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float spread = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, spread);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

struct Shape {
    std::size_t n, in, out;
};
// Widths that are and are not multiples of a quad (4), rows and outputs that are and are not
// multiples of the 8 x 32 block, and inputs past one float32 slice (1,024).
// For AMX: rows in whole tiles of 16 and past them, inputs in whole tiles of 64 and past them.
const Shape kShapes[] = {{1, 1, 1}, {19, 37, 45}, {8, 64, 32}, {17, 384, 33}, {3, 2, 16},
                         {40, 129, 100}, {0, 5, 7}, {9, 1536, 20}, {5, 2051, 18},
                         {64, 384, 96}, {48, 200, 40}, {33, 1536, 17}, {16, 64, 64}};

// The quantized integers of each row of m [rows x cols] (as the header defines them), by the
// header's rule written out again: scale max|v| / 127, q = round-half-even(v * 127 / max|v|).
std::vector<std::int32_t> reference_q(const std::vector<float>& m, std::size_t rows, std::size_t cols,
                                      std::vector<float>& scales) {
    std::vector<std::int32_t> q(rows * cols);
    scales.assign(rows, 0.0f);
    for (std::size_t r = 0; r < rows; ++r) {
        float amax = 0.0f;
        for (std::size_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(m[r * cols + c]));
        if (amax == 0.0f) continue;
        scales[r] = amax / 127.0f;
        const float inv = 127.0f / amax;
        for (std::size_t c = 0; c < cols; ++c)
            q[r * cols + c] = static_cast<std::int32_t>(std::nearbyint(m[r * cols + c] * inv));
    }
    return q;
}

// y by 64-bit integer sums of the reference integers and the header's last step.
std::vector<float> reference_gemm(const Shape& s, const std::vector<float>& x, const std::vector<float>& w,
                                  const std::vector<float>& b) {
    std::vector<float> xs, ws;
    const auto xq = reference_q(x, s.n, s.in, xs), wq = reference_q(w, s.out, s.in, ws);
    std::vector<float> y(s.n * s.out);
    for (std::size_t r = 0; r < s.n; ++r)
        for (std::size_t c = 0; c < s.out; ++c) {
            std::int64_t sum = 0;
            for (std::size_t i = 0; i < s.in; ++i) sum += std::int64_t{xq[r * s.in + i]} * wq[c * s.in + i];
            y[r * s.out + c] = std::fma(static_cast<float>(sum), xs[r] * ws[c], b.empty() ? 0.0f : b[c]);
        }
    return y;
}

enum class Run { float32, vnni_portable, vnni_kernel };

std::vector<float> run_gemm(Run run, const Shape& s, const std::vector<float>& x, const std::vector<float>& w,
                            const std::vector<float>& b) {
    const Int8Path path = run == Run::float32 ? Int8Path::float32 : Int8Path::vnni;
    const Int8Weights weights = quantize_int8_weights(w.data(), s.out, s.in, path);
    Int8Rows rows;
    quantize_int8_rows(x.data(), s.n, s.in, path, rows);
    std::vector<float> y(s.n * s.out + 1, -7.0f);  // one guard value past the end
    const float* bias = b.empty() ? nullptr : b.data();
    if (run == Run::vnni_portable) int8_gemm_vnni_portable(rows, weights, bias, y.data());
    else int8_gemm(rows, weights, bias, y.data());
    EXPECT_EQ(y.back(), -7.0f) << "the product wrote past y";
    y.pop_back();
    return y;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const Shape& s, const char* what) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
            << what << ": shape " << s.n << "x" << s.in << "x" << s.out << " output " << i << ": " << got[i]
            << " vs " << want[i];
}

TEST(Int8Gemm, QuantizesPerRowSymmetricallyWithRowSums) {
    const std::vector<float> w = {1.0f, -2.0f, 0.5f, 0.0f, 0.0f, 0.0f, 3.0f, 3.0f, -3.0f};  // 3 x 3
    const Int8Weights q = quantize_int8_weights(w.data(), 3, 3, Int8Path::float32);
    ASSERT_EQ(q.scale.size(), 3u);
    EXPECT_EQ(q.scale[0], 2.0f / 127.0f);
    EXPECT_EQ(q.scale[1], 0.0f);  // a row of zeros
    EXPECT_EQ(q.scale[2], 3.0f / 127.0f);
    const std::vector<float> want = {64.0f, -127.0f, 32.0f, 0, 0, 0, 127, 127, -127};  // 63.5 and 31.75 round to even / nearest
    EXPECT_EQ(q.values, want);
    EXPECT_EQ(q.row_sum, (std::vector<std::int32_t>{-31, 0, 127}));
    EXPECT_EQ(q.quads, 1u);
    EXPECT_EQ(q.panels, 1u);
}

TEST(Int8Gemm, RefusesValuesThatAreNotFiniteAndMismatchedOperands) {
    auto message_of = [](auto&& call) {
        try {
            call();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    const std::vector<float> bad = {1.0f, 2.0f, 1.0f, std::numeric_limits<float>::infinity()};  // row 1
    const std::string weight = message_of([&] { quantize_int8_weights(bad.data(), 2, 2, Int8Path::float32); });
    EXPECT_NE(weight.find("row 1 of a 2 x 2 weight"), std::string::npos) << weight;
    EXPECT_NE(weight.find("damaged"), std::string::npos) << weight;
    const std::vector<float> nan = {1.0f, 1.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f};  // token 1
    Int8Rows rows;
    const std::string input = message_of([&] { quantize_int8_rows(nan.data(), 2, 2, Int8Path::float32, rows); });
    EXPECT_NE(input.find("token 1"), std::string::npos) << input;
    EXPECT_NE(input.find("--precision f32"), std::string::npos) << input;
    const std::vector<float> w(6, 1.0f), x(4, 1.0f);
    const Int8Weights q = quantize_int8_weights(w.data(), 2, 3, Int8Path::float32);
    quantize_int8_rows(x.data(), 2, 2, Int8Path::float32, rows);  // 2 inputs against 3
    std::vector<float> y(4);
    EXPECT_THROW(int8_gemm(rows, q, nullptr, y.data()), Error);
    {
        const ScopedCpuPath f32(CpuPath::f32);  // no int8 kernel: the vnni layout is refused
        EXPECT_THROW(quantize_int8_weights(w.data(), 2, 3, Int8Path::vnni), Error);
    }
}

TEST(Int8Gemm, Float32PathGivesTheExactIntegerSums) {
    std::uint32_t seed = 1;
    for (const Shape& s : kShapes)
        for (const bool with_bias : {true, false}) {
            const auto x = random_floats(s.n * s.in, seed++), w = random_floats(s.out * s.in, seed++);
            const auto b = with_bias ? random_floats(s.out, seed++) : std::vector<float>{};
            expect_same_bits(run_gemm(Run::float32, s, x, w, b), reference_gemm(s, x, w, b), s, "float32 path");
        }
}

// Every value at the top of its row's range: the sums reach 127 x 127 x in (past 2^24 from
// 1,041 inputs on), where float32 sums would round unless the inputs are sliced.
TEST(Int8Gemm, SumsPastTwoToTheTwentyFourStayExact) {
    for (const Shape& s : {Shape{3, 1100, 17}, Shape{2, 2051, 5}, Shape{4, 4100, 3}}) {
        std::vector<float> x(s.n * s.in, 1.0f), w(s.out * s.in, -1.0f), b(s.out, 0.25f);
        x[1] = -1.0f;  // one term of the other sign, so that the sum is odd
        const std::vector<float> want = reference_gemm(s, x, w, b);
        EXPECT_GT(std::fabs(want[0] / ((1.0f / 127.0f) * (1.0f / 127.0f))), 16777216.0f);
        expect_same_bits(run_gemm(Run::float32, s, x, w, b), want, s, "float32 path");
    }
}

// Each CPU path's kernel (the portable loop on f32, reached by laying the operands out for the
// kernels first) against the 64-bit reference, bit for bit, sums past 2^24 included.
class Int8GemmPath : public testing::TestWithParam<CpuPath> {};

TEST_P(Int8GemmPath, KernelEqualsTheReference) {
    const CpuPath path = GetParam();
    const CpuPath best = best_cpu_path(cpu_features());
    if (std::max(path, CpuPath::avx2) > best) GTEST_SKIP() << "this CPU's best path is " << cpu_path_name(best);
    std::uint32_t seed = 100;
    for (const Shape& s : kShapes)
        for (const bool with_bias : {true, false}) {
            const auto x = random_floats(s.n * s.in, seed++), w = random_floats(s.out * s.in, seed++, 0.05f);
            const auto b = with_bias ? random_floats(s.out, seed++) : std::vector<float>{};
            const std::vector<float> want = reference_gemm(s, x, w, b);
            expect_same_bits(run_gemm(Run::vnni_portable, s, x, w, b), want, s, "portable twin");
            std::vector<float> got;
            {
                const ScopedCpuPath forced(std::max(path, CpuPath::avx2));  // lay out for the kernels
                const Int8Weights weights = quantize_int8_weights(w.data(), s.out, s.in, Int8Path::vnni);
                Int8Rows rows;
                quantize_int8_rows(x.data(), s.n, s.in, Int8Path::vnni, rows);
                const ScopedCpuPath run(path);
                got.assign(s.n * s.out + 1, -7.0f);
                int8_gemm(rows, weights, b.empty() ? nullptr : b.data(), got.data());
                EXPECT_EQ(got.back(), -7.0f) << "the product wrote past y";
                got.pop_back();
            }
            expect_same_bits(got, want, s, cpu_path_name(path));
        }
    for (const Shape& s : {Shape{32, 1100, 17}, Shape{2, 2051, 5}, Shape{16, 4100, 3}}) {
        std::vector<float> x(s.n * s.in, 1.0f), w(s.out * s.in, -1.0f), b(s.out, 0.25f);
        x[1] = -1.0f;
        const ScopedCpuPath forced(std::max(path, CpuPath::avx2));
        const Int8Weights weights = quantize_int8_weights(w.data(), s.out, s.in, Int8Path::vnni);
        Int8Rows rows;
        quantize_int8_rows(x.data(), s.n, s.in, Int8Path::vnni, rows);
        const ScopedCpuPath run(path);
        std::vector<float> got(s.n * s.out);
        int8_gemm(rows, weights, b.data(), got.data());
        expect_same_bits(got, reference_gemm(s, x, w, b), s, cpu_path_name(path));
    }
}

INSTANTIATE_TEST_SUITE_P(EveryCpuPath, Int8GemmPath,
                         testing::Values(CpuPath::amx, CpuPath::avx512, CpuPath::avxvnni, CpuPath::avx2, CpuPath::f32),
                         [](const testing::TestParamInfo<CpuPath>& info) { return std::string(cpu_path_name(info.param)); });

TEST(Int8Gemm, PacksUnsignedActivationsAndSignedWeightsInQuads) {
    if (!int8_kernel_available()) GTEST_SKIP() << "this CPU path has no int8 kernel (the vnni layout is refused)";
    const std::vector<float> w = {127, -127, 0, 1, 2};  // 1 x 5: scale 1
    const Int8Weights q = quantize_int8_weights(w.data(), 1, 5, Int8Path::vnni);
    ASSERT_EQ(q.words.size(), 2u * 16u);
    EXPECT_EQ(q.words[0], 0x0100817fu);  // 127, -127 (0x81), 0, 1
    EXPECT_EQ(q.words[16], 0x00000002u);  // 2, then zeros past the input
    EXPECT_EQ(q.words[1], 0u);            // the padding rows
    Int8Rows rows;
    quantize_int8_rows(w.data(), 1, 5, Int8Path::vnni, rows);
    ASSERT_EQ(rows.words.size(), 2u);
    EXPECT_EQ(rows.words[0], 0x818001ffu);  // q + 128: 255, 1, 128, 129
    EXPECT_EQ(rows.words[1], 0x80808082u);  // 130, then 128 (q = 0) past the input
}

// The input factors move a column's size from the activations to the weights: the product is the
// same up to the quantization, and an outlier input no longer flattens the others. Input 5 is
// 200 times larger than the others in every row and meets weights 200 times smaller (the shape of
// a transformer's outlier channels): quantized as it is, it leaves the other inputs a few levels.
TEST(Int8Gemm, InputFactorsKeepTheProductAndTameAnOutlierInput) {
    const Shape s{16, 64, 24};
    auto x = random_floats(s.n * s.in, 7), w = random_floats(s.out * s.in, 8);
    for (std::size_t r = 0; r < s.n; ++r) x[r * s.in + 5] *= 200.0f;
    for (std::size_t c = 0; c < s.out; ++c) w[c * s.in + 5] /= 200.0f;
    std::vector<double> exact(s.n * s.out, 0.0);
    for (std::size_t r = 0; r < s.n; ++r)
        for (std::size_t c = 0; c < s.out; ++c)
            for (std::size_t i = 0; i < s.in; ++i) exact[r * s.out + c] += double(x[r * s.in + i]) * w[c * s.in + i];
    auto error_with = [&](const float* factor) {
        const Int8Weights q = quantize_int8_weights(w.data(), s.out, s.in, Int8Path::float32, factor);
        Int8Rows rows;
        quantize_int8_rows(x.data(), s.n, s.in, Int8Path::float32, rows, factor);
        std::vector<float> y(s.n * s.out);
        int8_gemm(rows, q, nullptr, y.data());
        double err = 0, norm = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
            err += (y[i] - exact[i]) * (y[i] - exact[i]);
            norm += exact[i] * exact[i];
        }
        return std::sqrt(err / norm);
    };
    std::vector<float> factor(s.in, 1.0f);
    factor[5] = 1.0f / 200.0f;
    const double plain = error_with(nullptr), smoothed = error_with(factor.data());
    EXPECT_LT(smoothed, 0.02);
    EXPECT_LT(smoothed * 3, plain) << "plain " << plain << " smoothed " << smoothed;
}

}  // namespace
}  // namespace novelty
