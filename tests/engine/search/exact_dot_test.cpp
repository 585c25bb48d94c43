// exact_dot on vector registers (search/exact_dot_simd.hpp, picked by exact_dot_for_cpu) gives
// exact_dot's bits on every CPU path the CPU runs (skipped above its best): widths around the 16
// partial sums, large and tiny values, cancellations and subnormal products.
#include "novelty/util/cpu_path.hpp"
#include "search/exact_rescore.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

namespace novelty {
namespace {

class ExactDotPath : public testing::TestWithParam<CpuPath> {};

TEST_P(ExactDotPath, SameBitsAsTheReference) {
    const CpuPath best = best_cpu_path(cpu_features());
    if (GetParam() > best) GTEST_SKIP() << "this CPU's best path is " << cpu_path_name(best);
    const ScopedCpuPath path(GetParam());
    const ExactDotFn dot = exact_dot_for_cpu();
    std::mt19937 rng(11);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<int> exponent(-60, 60);
    for (std::size_t dim : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 33u, 64u, 383u, 384u, 1000u}) {
        for (int trial = 0; trial < 50; ++trial) {
            std::vector<float> a(dim), b(dim);
            for (std::size_t i = 0; i < dim; ++i) {
                a[i] = normal(rng);
                // Odd trials: values across 120 binades (products that round, cancel, or are subnormal).
                b[i] = trial % 2 ? std::ldexp(normal(rng), exponent(rng)) : (i % 3 == 2 ? -a[i - 1] : normal(rng));
            }
            ASSERT_EQ(std::bit_cast<std::uint32_t>(dot(a.data(), b.data(), dim)),
                      std::bit_cast<std::uint32_t>(exact_dot(a.data(), b.data(), dim)))
                << cpu_path_name(GetParam()) << " dim " << dim << " trial " << trial;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(EveryCpuPath, ExactDotPath,
                         testing::Values(CpuPath::amx, CpuPath::avx512, CpuPath::avxvnni, CpuPath::avx2, CpuPath::f32),
                         [](const testing::TestParamInfo<CpuPath>& info) { return std::string(cpu_path_name(info.param)); });

}  // namespace
}  // namespace novelty
