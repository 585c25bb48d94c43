// The CPU path (novelty/util/cpu_path.hpp): names, the order of the paths, the choice from CPUID's
// features (AMX only with the OS's permission), and the test override's limits. The switch by
// NOVELTY_CPU_PATH is tested through `novelty info` (tests/cli/cli_test.cpp), in a fresh process.
#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"

#include <gtest/gtest.h>

namespace novelty {
namespace {

TEST(CpuPath, NamesRoundTripAndUnknownNamesAreRefused) {
    for (CpuPath p : {CpuPath::f32, CpuPath::avx2, CpuPath::avxvnni, CpuPath::avx512, CpuPath::amx})
        EXPECT_EQ(parse_cpu_path(cpu_path_name(p)), p);
    EXPECT_EQ(std::string(cpu_path_name(CpuPath::avxvnni)), "avxvnni");
    EXPECT_FALSE(parse_cpu_path("avx512vnni"));
    EXPECT_FALSE(parse_cpu_path(""));
    EXPECT_FALSE(parse_cpu_path("AMX"));
}

TEST(CpuPath, BestPathFollowsTheFeaturesAndNeedsTheAmxPermission) {
    CpuFeatures f;
    EXPECT_EQ(best_cpu_path(f), CpuPath::f32);
    f.avx2 = true;
    EXPECT_EQ(best_cpu_path(f), CpuPath::f32);  // AVX2 without FMA: the kernels' last step needs it
    f.fma = true;
    EXPECT_EQ(best_cpu_path(f), CpuPath::avx2);
    f.avxvnni = true;
    EXPECT_EQ(best_cpu_path(f), CpuPath::avxvnni);
    f.avx512f = true;
    EXPECT_EQ(best_cpu_path(f), CpuPath::avxvnni);  // AVX-512 without VNNI (Skylake-X)
    f.avx512vnni = true;
    EXPECT_EQ(best_cpu_path(f), CpuPath::avx512);
    f.amx_tile = f.amx_int8 = true;
    EXPECT_EQ(best_cpu_path(f), CpuPath::avx512);  // the OS refused the tile state
    f.amx_permitted = true;
    EXPECT_EQ(best_cpu_path(f), CpuPath::amx);
    f.avx2 = f.fma = f.avxvnni = false;  // AVX-512 CPUs have AVX2, but the choice does not depend on it
    EXPECT_EQ(best_cpu_path(f), CpuPath::amx);
}

TEST(CpuPath, OverrideGoesDownAndNeverUp) {
    const CpuPath best = best_cpu_path(cpu_features());
    for (CpuPath p : {CpuPath::f32, CpuPath::avx2, CpuPath::avxvnni, CpuPath::avx512, CpuPath::amx}) {
        if (p > best) {
            EXPECT_THROW(ScopedCpuPath{p}, Error) << cpu_path_name(p);
            continue;
        }
        const CpuPath before = cpu_path();
        {
            const ScopedCpuPath forced(p);
            EXPECT_EQ(cpu_path(), p);
            EXPECT_EQ(int8_kernel_available(), p >= CpuPath::avx2);
            EXPECT_EQ(bf16_kernel_available(), p >= CpuPath::avx512 && cpu_features().avx512bf16);
            EXPECT_NE(cpu_path_reason().find("forced"), std::string::npos);
        }
        EXPECT_EQ(cpu_path(), before);
    }
}

}  // namespace
}  // namespace novelty
