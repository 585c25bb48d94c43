// The rules shared by the CPU and CUDA backends (engine/src/search/search_rules.hpp), and backend
// choice (novelty/search/backends.hpp), checked on the CPU.
#include "search/search_rules.hpp"

#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace novelty {
namespace {

constexpr float minus_inf = -std::numeric_limits<float>::infinity();

TEST(SearchRules, ColumnsBelowLimitIsThePrefixMask) {
    EXPECT_EQ(columns_below_limit(0, 0, 10), 0u);
    EXPECT_EQ(columns_below_limit(5, 0, 10), 5u);
    EXPECT_EQ(columns_below_limit(10, 0, 10), 10u);
    EXPECT_EQ(columns_below_limit(25, 10, 10), 10u);
    EXPECT_EQ(columns_below_limit(15, 10, 10), 5u);
    EXPECT_EQ(columns_below_limit(10, 10, 10), 0u);
    EXPECT_EQ(columns_below_limit(3, 10, 10), 0u);
}

TEST(SearchRules, BestOfOrdersBySimilarityThenLowerRowAndPads) {
    const std::vector<float> sims = {0.5f, 0.9f, 0.5f, minus_inf, 0.7f, 0.5f, 0.2f};
    const std::vector<std::int64_t> rows = {8, 3, 2, 1, 6, 5, -1};
    std::vector<std::int64_t> out_rows(4);
    std::vector<float> out_sims(4);
    // Rows 8, 2 and 5 tie at 0.5: the lower rows win the last place. The -inf slot and row -1
    // are empty slots.
    EXPECT_EQ(best_of(sims.data(), rows.data(), sims.size(), 4, out_rows.data(), out_sims.data()), 4u);
    EXPECT_EQ(out_rows, (std::vector<std::int64_t>{3, 6, 2, 5}));
    EXPECT_EQ(out_sims, (std::vector<float>{0.9f, 0.7f, 0.5f, 0.5f}));

    std::vector<std::int64_t> few_rows(3);
    std::vector<float> few_sims(3);
    const std::vector<float> one_sim = {0.1f, minus_inf};
    const std::vector<std::int64_t> one_row = {4, 0};
    EXPECT_EQ(best_of(one_sim.data(), one_row.data(), 2, 3, few_rows.data(), few_sims.data()), 1u);
    EXPECT_EQ(few_rows, (std::vector<std::int64_t>{4, -1, -1}));
    EXPECT_EQ(few_sims[0], 0.1f);
    EXPECT_EQ(few_sims[1], minus_inf);
    EXPECT_EQ(few_sims[2], minus_inf);
}

TEST(SearchRules, DensityIsMeanDistanceOverTheFirstQ) {
    SelfJoin join;
    join.n_rows = 2;
    join.q = 2;
    join.k_stored = 3;
    join.sims = {0.9f, 0.5f, 0.1f, 0.8f, minus_inf, minus_inf};
    fill_densities(join, {3, 1});
    ASSERT_EQ(join.density.size(), 2u);
    EXPECT_NEAR(join.density[0], ((1 - 0.9) + (1 - 0.5)) / 2, 1e-7);
    EXPECT_TRUE(std::isnan(join.density[1]));  // fewer than q neighbours
}

TEST(SearchRules, SelfJoinFromTopKMovesRowsAndFillsDensities) {
    TopK top;
    top.n_queries = 2;
    top.k = 2;
    top.rows = {1, 2, 0, -1};
    top.sims = {0.75f, 0.25f, 0.5f, minus_inf};
    top.count = {2, 1};
    const SelfJoin join = self_join_from(std::move(top), 2, 2);
    EXPECT_EQ(join.n_rows, 2u);
    EXPECT_EQ(join.q, 2u);
    EXPECT_EQ(join.k_stored, 2u);
    EXPECT_EQ(join.rows, (std::vector<std::int64_t>{1, 2, 0, -1}));
    EXPECT_NEAR(join.density[0], 0.5, 1e-7);
    EXPECT_TRUE(std::isnan(join.density[1]));
}

TEST(SearchRules, FilterCapacityHoldsAtLeastTwiceK) {
    EXPECT_EQ(filter_capacity(1), 1024u);
    EXPECT_EQ(filter_capacity(100), 1024u);
    EXPECT_EQ(filter_capacity(2048), 4096u);
}

TEST(SearchRules, TilePlanFitsTheBudgetAndTheProblem) {
    SearchTuning tuning;
    // Large problem: the largest tiles, a batch of whole tiles.
    DeviceTilePlan plan = plan_device_tiles(50000, 1000000, 100, std::size_t{1} << 30, std::size_t{1} << 30, tuning);
    EXPECT_EQ(plan.corpus_tile, 65536u);
    EXPECT_EQ(plan.query_tile, 4096u);
    EXPECT_EQ(plan.query_batch, 50000u);  // all queries' candidates fit in 1 GiB
    EXPECT_LE(plan.query_batch * (100 + filter_capacity(100)) * 12, std::size_t{1} << 30);
    // 200 MiB of candidates (1,124 x 12 bytes per query): batches of whole tiles.
    plan = plan_device_tiles(50000, 1000000, 100, std::size_t{1} << 30, std::size_t{200} << 20, tuning);
    EXPECT_EQ(plan.query_batch, 12288u);
    EXPECT_LE(plan.query_tile * plan.corpus_tile * 4, std::size_t{1} << 30);
    // A small similarity budget shrinks the query tile, never below 1.
    plan = plan_device_tiles(50000, 1000000, 100, 65536 * 4 * 10, std::size_t{1} << 30, tuning);
    EXPECT_EQ(plan.query_tile, 10u);
    plan = plan_device_tiles(50000, 1000000, 100, 1, std::size_t{1} << 30, tuning);
    EXPECT_EQ(plan.query_tile, 1u);
    // Small problems clamp the tiles to themselves.
    plan = plan_device_tiles(3, 500, 10, std::size_t{1} << 30, std::size_t{1} << 30, tuning);
    EXPECT_EQ(plan.query_tile, 3u);
    EXPECT_EQ(plan.corpus_tile, 500u);
    EXPECT_EQ(plan.query_batch, 3u);
    // Test-only overrides; the corpus tile still holds k results.
    tuning.query_tile = 7;
    tuning.corpus_tile = 16;
    plan = plan_device_tiles(100, 5000, 50, std::size_t{1} << 30, std::size_t{1} << 30, tuning);
    EXPECT_EQ(plan.query_tile, 7u);
    EXPECT_EQ(plan.corpus_tile, 50u);
    // A small candidate budget gives batches of one tile.
    plan = plan_device_tiles(100, 5000, 50, std::size_t{1} << 30, 1, tuning);
    EXPECT_EQ(plan.query_batch, 7u);
}

TEST(Backends, StorageNamesRoundTrip) {
    for (auto s : {DeviceStorage::f16, DeviceStorage::bf16, DeviceStorage::f32})
        EXPECT_EQ(parse_storage(storage_name(s)), s);
    EXPECT_EQ(parse_storage("float16"), DeviceStorage::f16);
    EXPECT_THROW(parse_storage("int8"), UsageError);
}

TEST(Backends, ChoiceFollowsBuildAndMachine) {
    EXPECT_EQ(make_backend("cpu")->name(), "cpu");
    EXPECT_THROW(make_backend("gpu"), UsageError);
    const bool usable = cuda_compiled() && !list_devices().empty();
    EXPECT_EQ(auto_device(), usable ? "cuda" : "cpu");
    EXPECT_EQ(make_backend("auto")->name(), usable ? "cuda" : "cpu");
    if (!usable) {
        try {
            make_backend("cuda");
            FAIL() << "cuda without CUDA must be refused";
        } catch (const UsageError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find(cuda_compiled() ? "no CUDA device" : "not compiled in"), std::string::npos)
                << message;
        }
    }
    if (!cuda_compiled()) EXPECT_THROW(make_cuda_backend(), UsageError);
}

TEST(Backends, AChoiceByNameMakesTheBackendItNames) {
    BackendChoice choice;
    choice.device = "cpu";
    EXPECT_EQ(make_backend(choice)->label(), "cpu");
    choice.storage = "bf16";
    EXPECT_EQ(make_backend(choice)->label(), "cpu-bf16");
    choice.device_storage = "int8";  // the CUDA storage is checked even when the CPU is chosen
    EXPECT_THROW(make_backend(choice), UsageError);
    choice.device_storage = "f32";
    choice.storage = "f16";  // not a CPU storage
    try {
        make_backend(choice);
        FAIL() << "f16 CPU storage must be refused";
    } catch (const UsageError& e) {
        EXPECT_EQ(e.parameter(), "storage");
    }
    choice.storage = "f32";
    choice.device = "gpu";
    EXPECT_THROW(make_backend(choice), UsageError);
}

}  // namespace
}  // namespace novelty

TEST(SearchRules, EmptyTopKIsAllPadding) {
    const novelty::TopK top = novelty::empty_top_k(3, 4);
    EXPECT_EQ(top.n_queries, 3u);
    EXPECT_EQ(top.k, 4u);
    ASSERT_EQ(top.rows.size(), 12u);
    ASSERT_EQ(top.sims.size(), 12u);
    ASSERT_EQ(top.count.size(), 3u);
    for (std::size_t i = 0; i < 12; ++i) {
        EXPECT_EQ(top.rows[i], -1);
        EXPECT_EQ(top.sims[i], -std::numeric_limits<float>::infinity());
    }
    for (std::size_t c : top.count) EXPECT_EQ(c, 0u);
    EXPECT_TRUE(novelty::empty_top_k(0, 5).rows.empty());
}
