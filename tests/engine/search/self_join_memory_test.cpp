// The CPU self-join's memory (every storage): what it holds above the corpus is the result (k rows
// and similarities a row, and the densities), each row's collector within its bound
// (symmetric_join_bytes) and the narrow copy of the rows; nothing else may grow with the corpus.
// Each size runs in a child process (this test binary, re-run on the hidden child test below), so
// that its peak resident memory (VmHWM, reset before the join) is its own; the growth per row
// between two corpus sizes must stay within that bound. The int8 screen's margin once let each
// row's candidates grow without limit (19 KB a row on 384-dimension embeddings).
#include "novelty/search/backends.hpp"
#include "novelty/search/search.hpp"
#include "search/cpu/cpu_self_join.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace novelty {
namespace {

constexpr const char* child_env = "NOVELTY_TEST_SELF_JOIN_PEAK";
constexpr std::size_t dim = 64, q = 50;

// A /proc/self/status field in bytes (its kB value).
std::size_t status_bytes(const std::string& field) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
    return 0;
}

// Clustered unit rows like real embeddings (50 rows a centre, noise 0.7 of a centre's size): many
// neighbours within the int8 screen's margin of each row's k-th.
std::vector<float> clustered_rows(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::vector<float> centres((n / 50 + 1) * dim), rows(n * dim);
    for (float& v : centres) v = normal(rng);
    std::uniform_int_distribution<std::size_t> pick(0, n / 50);
    for (std::size_t r = 0; r < n; ++r) {
        const float* c = centres.data() + pick(rng) * dim;
        double norm = 0;
        for (std::size_t i = 0; i < dim; ++i) {
            rows[r * dim + i] = c[i] + 0.7f * normal(rng);
            norm += double(rows[r * dim + i]) * rows[r * dim + i];
        }
        for (std::size_t i = 0; i < dim; ++i) rows[r * dim + i] = static_cast<float>(rows[r * dim + i] / std::sqrt(norm));
    }
    return rows;
}

// The child: "STORAGE N" in the environment; prints the bytes the self-join added to the peak.
TEST(SelfJoinMemory, DISABLED_Child) {
    const char* spec = std::getenv(child_env);
    ASSERT_NE(spec, nullptr);
    std::istringstream in(spec);
    std::string storage;
    std::size_t n = 0;
    in >> storage >> n;
    const std::vector<float> rows = clustered_rows(n, 7);
    CpuBackendOptions options;
    options.storage = parse_cpu_storage(storage);
    auto backend = make_cpu_backend(options);
    backend->tuning.threads = 2;
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    const std::size_t before = status_bytes("VmRSS");
    const SelfJoin join = backend->build(VectorView::of(rows, dim))->self_join(n, q, q);
    ASSERT_EQ(join.rows.size(), n * q);
    std::printf("growth_bytes=%zu\n", status_bytes("VmHWM") - before);
}

std::size_t child_growth(const std::string& storage, std::size_t n) {
    test::TempDir tmp;
    const std::string out = tmp.file("out");
    const std::string cmd = std::string(child_env) + "=" + test::shell_quote(storage + " " + std::to_string(n)) +
                            " " + test::shell_quote(std::filesystem::read_symlink("/proc/self/exe").string()) +
                            " --gtest_also_run_disabled_tests --gtest_filter=SelfJoinMemory.DISABLED_Child >" +
                            test::shell_quote(out) + " 2>&1";
    const int status = std::system(cmd.c_str());
    const std::string text = test::read_file(out);
    EXPECT_EQ(status, 0) << text;
    const std::size_t at = text.find("growth_bytes=");
    if (at == std::string::npos) {
        ADD_FAILURE() << "the child printed no growth: " << text;
        return 0;
    }
    return std::stoull(text.substr(at + 13));
}

TEST(SelfJoinMemory, GrowthPerRowStaysWithinTheResultAndTheCollectorsBound) {
    if (status_bytes("VmHWM") == 0) GTEST_SKIP() << "no /proc/self/status VmHWM here";
    const std::size_t small = 6000, large = 18000;
    for (const std::string storage : {"f32", "bf16", "int8"}) {
        const std::size_t narrow = storage == "int8" ? dim + 8 : storage == "bf16" ? 2 * dim : 0;
        const std::size_t result = q * (sizeof(std::int64_t) + sizeof(float)) + sizeof(float);
        const double bound = 1.25 * static_cast<double>(symmetric_join_bytes(1, q) + result + narrow);
        const std::size_t g_small = child_growth(storage, small), g_large = child_growth(storage, large);
        const double per_row = (static_cast<double>(g_large) - static_cast<double>(g_small)) / (large - small);
        RecordProperty(storage + "_bytes_per_row", std::to_string(per_row));
        std::printf("%s: self-join growth %zu and %zu bytes at %zu and %zu rows: %.0f a row (bound %.0f)\n",
                    storage.c_str(), g_small, g_large, small, large, per_row, bound);
        EXPECT_LE(per_row, bound) << storage;
    }
}

}  // namespace
}  // namespace novelty
