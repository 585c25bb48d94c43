// `--precision auto`: the bar's swap rule (precision_bar.hpp), the choice from calibration times
// (precision_calibration.hpp), the calibration cache (precision_cache.hpp) and the resolution
// order: the pin, the candidates, the cache (precision_auto.hpp). No wall-clock time is asserted:
// choices are made from given times, and a cached record is recognised by its made-up times.
#include "encoder/precision_auto.hpp"
#include "encoder/precision_bar.hpp"
#include "encoder/precision_cache.hpp"
#include "encoder/precision_calibration.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"
#include "util/parallel_for.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

using namespace novelty;
using namespace novelty::encoder;
namespace fs = std::filesystem;

namespace {

// Sets (or, for null, unsets) an environment variable for its lifetime.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) setenv(name_, old_->c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

// float32's top 10 of an idea: rows 0..9 at similarities 0.90, 0.89, ..., 0.81.
std::vector<RankedPaper> f32_top10() {
    std::vector<RankedPaper> top;
    for (std::size_t r = 0; r < 10; ++r) top.push_back({r, 0.90 - 0.01 * static_cast<double>(r)});
    return top;
}

// `top` with its 10th paper (row 9, 0.81) replaced by row 50 at float32 similarity `sim`.
std::vector<RankedPaper> tenth_replaced(double sim) {
    std::vector<RankedPaper> top = f32_top10();
    top[9] = {50, sim};
    return top;
}

std::string minilm_dir() { return std::string(NOVELTY_SOURCE_DIR) + "/models/all-MiniLM-L6-v2"; }

}  // namespace

TEST(PrecisionBar, SwapsOfPapersWithinATolerancePassAndFartherOnesCount) {
    const auto want = f32_top10();
    EXPECT_EQ(counted_swaps(want, want), 0u);
    EXPECT_EQ(counted_swaps(want, tenth_replaced(0.81 - 0.0005)), 0u) << "0.0005 apart: within 0.001";
    EXPECT_EQ(counted_swaps(want, tenth_replaced(0.81 - 0.002)), 1u) << "0.002 apart: more than 0.001";
    std::vector<RankedPaper> reordered(want.rbegin(), want.rend());
    EXPECT_EQ(counted_swaps(want, reordered), 0u) << "the same papers in another order";
    EXPECT_EQ(counted_swaps(want, tenth_replaced(0.81 - 0.002), 0.003), 0u) << "the tolerance is a parameter";
}

TEST(PrecisionBar, SwapsArePairedClosestFirst) {
    // Rows 8 (0.82) and 9 (0.81) left; rows 50 (0.8195) and 51 (0.8095) entered: paired 8-50 and
    // 9-51, both 0.0005 apart, so nothing counts (crossed, 8-51 would be 0.0105 apart).
    auto got = f32_top10();
    got[8] = {51, 0.8095};
    got[9] = {50, 0.8195};
    EXPECT_EQ(counted_swaps(f32_top10(), got), 0u);
    got[8] = {51, 0.70};  // one far swap among two
    EXPECT_EQ(counted_swaps(f32_top10(), got), 1u);
    got.pop_back();  // a paper missing from a shorter list counts
    EXPECT_EQ(counted_swaps(f32_top10(), got), 2u);
}

TEST(PrecisionBar, EveryPartOfTheBarIsRequired) {
    const BarMeasures good{0.9993, 0.9996, 20, 20, 0.0028};
    EXPECT_TRUE(meets_bar(good));
    EXPECT_EQ(bar_shortfall(good), "");
    auto worse = [&](auto change) {
        BarMeasures m = good;
        change(m);
        EXPECT_FALSE(meets_bar(m));
        EXPECT_NE(bar_shortfall(m), "");
    };
    worse([](BarMeasures& m) { m.min_cosine = 0.9989; });
    worse([](BarMeasures& m) { m.mean_cosine = 0.9994; });
    worse([](BarMeasures& m) { m.ideas_kept_top10 = 19; });
    worse([](BarMeasures& m) { m.rnd_auroc_difference = 0.0031; });
    worse([](BarMeasures& m) { m.ideas = 0, m.ideas_kept_top10 = 0; });
}

TEST(PrecisionBar, TheTableKnowsOnlyWhatWasMeasured) {
    EXPECT_TRUE(precision_meets_bar("any-model", "f32"));
    EXPECT_FALSE(precision_meets_bar("any-model", "bf16")) << "never measured: not chosen";
    EXPECT_FALSE(precision_meets_bar("all-MiniLM-L6-v2", "fp16"));
}

TEST(PrecisionAuto, ChoosesTheFastestThatKeepsTheBarAndNeverOneSlowerThanF32) {
    EXPECT_EQ(fastest_keeping_bar({{"f32", 1.0}, {"bf16", 0.6}, {"int8", 0.5}}, {"f32", "int8", "bf16"}), "int8");
    EXPECT_EQ(fastest_keeping_bar({{"f32", 1.0}, {"bf16", 0.6}, {"int8", 0.5}}, {"f32", "bf16"}), "bf16")
        << "int8 is faster but misses the bar";
    EXPECT_EQ(fastest_keeping_bar({{"f32", 1.0}, {"bf16", 1.2}}, {"f32", "bf16"}), "f32") << "bf16 slower than f32";
    EXPECT_EQ(fastest_keeping_bar({{"f32", 1.0}, {"bf16", 0.97}}, {"f32", "bf16"}), "f32") << "within the noise margin";
    EXPECT_EQ(fastest_keeping_bar({{"f32", 1.0}, {"bf16", 0.9}}, {"f32", "bf16"}), "bf16");
    EXPECT_EQ(fastest_keeping_bar({{"bf16", 0.5}}, {"f32", "bf16"}), "f32") << "no f32 time: nothing to beat it by";
}

TEST(PrecisionAuto, CacheKeepsOneRecordPerKeyAndIgnoresADamagedFile) {
    const test::TempDir dir;
    const std::string path = dir.file("sub/encoder_precision.json");
    const CalibrationKey a{"CPU A", "amx", 2, "m", "1"}, b{"CPU A", "amx", 4, "m", "1"};
    EXPECT_FALSE(read_calibration(path, a));
    ASSERT_TRUE(write_calibration(path, a, {{{"f32", 2.0}, {"bf16", 1.0}}, "bf16", "2026-01-01T00:00:00Z"}));
    ASSERT_TRUE(write_calibration(path, b, {{{"f32", 2.0}, {"bf16", 3.0}}, "f32", "2026-01-02T00:00:00Z"}));
    ASSERT_TRUE(write_calibration(path, a, {{{"f32", 2.0}, {"int8", 1.0}}, "int8", "2026-01-03T00:00:00Z"}));
    const auto ra = read_calibration(path, a), rb = read_calibration(path, b);
    ASSERT_TRUE(ra && rb);
    EXPECT_EQ(ra->chosen, "int8");
    EXPECT_EQ(ra->seconds.at("int8"), 1.0);
    EXPECT_EQ(rb->chosen, "f32");
    EXPECT_FALSE(read_calibration(path, CalibrationKey{"CPU B", "amx", 2, "m", "1"}));
    test::write_file(path, "{not json");
    EXPECT_FALSE(read_calibration(path, a));
    EXPECT_FALSE(write_calibration("", a, *ra)) << "no cache directory: nothing written, nothing thrown";
}

TEST(PrecisionAuto, CachePathFollowsXdgCacheHome) {
    {
        const ScopedEnv xdg("XDG_CACHE_HOME", "/somewhere/cache");
        EXPECT_EQ(calibration_cache_path(), "/somewhere/cache/novelty/encoder_precision.json");
    }
    const ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    const ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(calibration_cache_path(), "/home/u/.cache/novelty/encoder_precision.json");
}

TEST(PrecisionAuto, ThePinWinsAndIsChecked) {
    const std::string dir = test::fixture("encoder/tiny-xlmr");
    {
        const ScopedEnv pin(auto_precision_env, "int8");
        const ResolvedPrecision r = resolve_encoder_precision("auto", dir);
        EXPECT_EQ(r.precision, "int8");
        EXPECT_NE(r.reason.find("pinned"), std::string::npos) << r.reason;
        EXPECT_EQ(resolve_encoder_precision("bf16", dir).precision, "bf16") << "a named precision is not auto";
    }
    const ScopedEnv bad(auto_precision_env, "fp16");
    EXPECT_THROW(resolve_encoder_precision("auto", dir), UsageError);
}

TEST(PrecisionAuto, AModelWithoutAMeasuredBarIsF32WithoutMeasuring) {
    const ScopedEnv pin(auto_precision_env, nullptr);
    const test::TempDir cache;
    const ScopedEnv xdg("XDG_CACHE_HOME", cache.path().c_str());
    const ResolvedPrecision r = resolve_encoder_precision("auto", test::fixture("encoder/tiny-bert-cls"));
    EXPECT_EQ(r.precision, "f32");
    EXPECT_FALSE(fs::exists(calibration_cache_path())) << "nothing was calibrated";
    EXPECT_EQ(auto_candidates("tiny-bert-cls"), std::vector<std::string>{"f32"});
}

// With all-MiniLM-L6-v2 on a CPU where a narrow precision is a candidate: a cached record for this
// CPU is used as it stands (its made-up times show in the reason), and a record naming a precision
// that is no longer a candidate is measured again.
TEST(PrecisionAuto, ACachedCalibrationIsUsedForItsKey) {
    if (!fs::exists(minilm_dir() + "/config.json")) GTEST_SKIP() << "all-MiniLM-L6-v2 is not installed";
    const std::vector<std::string> candidates = auto_candidates("all-MiniLM-L6-v2");
    if (candidates.size() < 2) GTEST_SKIP() << "no narrow precision keeps the bar with a kernel on this CPU";
    const ScopedEnv pin(auto_precision_env, nullptr);
    const test::TempDir cache;
    const ScopedEnv xdg("XDG_CACHE_HOME", cache.path().c_str());
    const CalibrationKey key{cpu_model_name(), cpu_path_name(cpu_path()), resolve_threads(1), "all-MiniLM-L6-v2",
                             NOVELTY_VERSION};
    const std::string narrow = candidates.back();
    ASSERT_TRUE(write_calibration(calibration_cache_path(), key,
                                  {{{"f32", 123.0}, {narrow, 61.5}}, narrow, "2026-01-01T00:00:00Z"}));
    const ResolvedPrecision r = resolve_encoder_precision("auto", minilm_dir(), 1);
    EXPECT_EQ(r.precision, narrow);
    EXPECT_NE(r.reason.find("123.000 s"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("2.00x f32"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("cached"), std::string::npos) << r.reason;
    for (const char* stale : {"int8", "bf16"}) {
        if (std::find(candidates.begin(), candidates.end(), stale) != candidates.end()) continue;
        ASSERT_TRUE(write_calibration(calibration_cache_path(), key,
                                      {{{"f32", 123.0}, {stale, 61.5}}, stale, "2026-01-01T00:00:00Z"}));
        const ResolvedPrecision again = resolve_encoder_precision("auto", minilm_dir(), 1);
        EXPECT_NE(again.precision, stale);
        EXPECT_EQ(again.reason.find("123.000 s"), std::string::npos) << "measured again: " << again.reason;
        break;
    }
}

TEST(PrecisionAuto, CalibrationTimesEveryPrecisionAsked) {
    const PrecisionTimes t = time_precisions(test::fixture("encoder/tiny-bert-cls"), {"f32", "bf16", "int8"}, 2, 1);
    ASSERT_EQ(t.size(), 3u);
    for (const auto& [p, s] : t) EXPECT_GT(s, 0.0) << p;
}
