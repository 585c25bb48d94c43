// Densities on demand through a CUDA index against the full self-join path through the same
// index, with per-idea cutoffs and exclusions beyond the stored extras, and a second run that
// reads every density back from the store; skips without a device. The two paths must agree bit
// for bit in every storage: with float16 storage a resident self-join re-scores its final k
// exactly as a search does (docs/cuda.md), so its densities are the searches' bits.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"
#include "scoring_corpus.hpp"
#include "search_reference.hpp"

namespace novelty {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(CudaDensityStore, OnDemandEqualsTheFullSelfJoinThroughTheSameIndex) {
    if (list_devices().empty()) GTEST_SKIP() << "no CUDA device";
    const std::size_t n = 3000, dim = 32, n_ideas = 24;
    auto rows = test::random_unit_rows(n, dim, 71);
    for (std::size_t i = 0; i + 9 < n; i += 13) std::copy_n(rows.begin() + i * dim, dim, rows.begin() + (i + 9) * dim);
    const auto ideas = test::random_unit_rows(n_ideas, dim, 72);
    for (const DeviceStorage storage : {DeviceStorage::f32, DeviceStorage::f16}) {
        test::TempDir a, b;
        const Corpus on_demand = Corpus::open(test::make_scoring_corpus(a, rows, dim));
        const Corpus reference = Corpus::open(test::make_scoring_corpus(b, rows, dim));
        ScoreInput input{ideas.data(), n_ideas, dim, {}, {}, {}};
        std::mt19937 rng(73);
        for (std::size_t i = 0; i < n_ideas; ++i) {
            input.row_limit.push_back(i % 4 == 0 ? n : 200 + rng() % (n - 200));
            std::vector<std::int64_t> excluded;
            for (int e = 0; e < (i % 3 == 0 ? 20 : 2); ++e) excluded.push_back(static_cast<std::int64_t>(rng() % n));
            input.excluded.add(excluded);
        }
        ScoreOptions options;
        options.p = 20;
        options.q = 10;
        ScoreOptions full = options;
        full.densities = DensityMethod::self_join;
        CudaBackendOptions device;
        device.storage = storage;
        auto backend = make_cuda_backend(device);
        const auto index_a = backend->build(VectorView::of(on_demand.vectors()));
        const auto index_b = backend->build(VectorView::of(reference.vectors()));
        Scorer scorer(on_demand, *index_a, options), reference_scorer(reference, *index_b, full);
        const auto got = scorer.score(input);
        const auto want = reference_scorer.score(input);
        EXPECT_GT(scorer.density_counts().computed, 0u);
        for (std::size_t i = 0; i < n_ideas; ++i) {
            EXPECT_TRUE(same_bits(got[i].nd, want[i].nd)) << "idea " << i;
            EXPECT_TRUE(same_bits(got[i].rnd, want[i].rnd)) << "idea " << i;
            EXPECT_EQ(got[i].neighbor_rows, want[i].neighbor_rows) << "idea " << i;
            ASSERT_EQ(got[i].neighbor_nd.size(), want[i].neighbor_nd.size());
            for (std::size_t r = 0; r < got[i].neighbor_nd.size(); ++r)
                EXPECT_TRUE(same_bits(got[i].neighbor_nd[r], want[i].neighbor_nd[r])) << "idea " << i << " neighbour " << r;
            EXPECT_EQ(got[i].densities_by, want[i].densities_by);
        }
        // A later run through a new index reads every density back and computes none.
        const auto index_c = backend->build(VectorView::of(on_demand.vectors()));
        Scorer again(on_demand, *index_c, options);
        const auto second = again.score(input);
        EXPECT_EQ(again.density_counts().computed, 0u);
        EXPECT_EQ(again.density_counts().searches, 0u);
        for (std::size_t i = 0; i < n_ideas; ++i) EXPECT_EQ(second[i].neighbor_nd, got[i].neighbor_nd) << "idea " << i;
    }
}

}  // namespace
}  // namespace novelty
