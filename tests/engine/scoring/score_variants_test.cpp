// The density definitions, neighbour profiles and the scores built on them (density_p,
// rnd_euclid, relative HD, HD's historical window) against brute force on random data.
#include "scoring/density_variants.hpp"
#include "novelty/util/error.hpp"
#include "scoring/neighbor_profiles.hpp"
#include "scoring/score_sweep.hpp"
#include "novelty/scoring/scoring.hpp"
#include "scoring_corpus.hpp"
#include "search_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace novelty;
using novelty::test::TempDir;

namespace {

double brute_density(const std::vector<test::RefHit>& hits, std::size_t q, DensityKind kind) {
    if (kind == DensityKind::kth_cosine) return 1.0 - hits[q - 1].sim;
    double sum = 0;
    for (std::size_t r = 0; r < q; ++r)
        sum += kind == DensityKind::mean_cosine ? 1.0 - hits[r].sim : std::sqrt(std::max(0.0, 2.0 - 2.0 * hits[r].sim));
    return sum / static_cast<double>(q);
}

/// The range an RND can take by brute force when densities within 1e-6 of the idea's may tie.
struct RankRange {
    double low = 0, high = 0;
};

RankRange brute_rnd(const Corpus& corpus, const float* idea, std::size_t limit, const std::vector<std::int64_t>& excluded,
                    std::size_t p, std::size_t q, DensityKind kind) {
    const VectorView view = VectorView::of(corpus.vectors());
    const auto near = test::reference_topk(view, idea, limit, excluded, std::max(p, q));
    const double own = brute_density(near, q, kind);
    std::vector<float> v(view.dim);
    std::size_t low = 0, high = 0;
    for (std::size_t j = 0; j < p; ++j) {
        corpus.vectors().row_as_f32(static_cast<std::size_t>(near[j].row), v.data());
        std::vector<std::int64_t> left_out = excluded;
        left_out.push_back(near[j].row);
        const double theirs = brute_density(test::reference_topk(view, v.data(), limit, left_out, q), q, kind);
        low += theirs <= own - 1e-6;
        high += theirs <= own + 1e-6;
    }
    return {100.0 * low / p, 100.0 * high / p};
}

struct Fixture {
    TempDir tmp;
    std::size_t n = 300, dim = 10, n_ideas = 10;
    std::vector<float> vectors = test::random_unit_rows(n, dim, 31);
    Corpus corpus = Corpus::open(test::make_scoring_corpus(tmp, vectors, dim));
    std::vector<float> ideas = test::random_unit_rows(n_ideas, dim, 32);
    std::vector<std::vector<std::int64_t>> excluded;

    /// Ideas with cutoffs (every third the whole corpus) and exclusions (some of each idea's own
    /// nearest, some at random), as the scoring tests do.
    ScoreInput input() {
        ScoreInput in{ideas.data(), n_ideas, dim, {}, {}};
        std::mt19937 rng(33);
        excluded.assign(n_ideas, {});
        for (std::size_t i = 0; i < n_ideas; ++i) {
            in.row_limit.push_back(i % 3 == 0 ? n : corpus.rows_through(*parse_date(std::to_string(2009 + i))));
            const auto near = test::reference_topk(VectorView::of(corpus.vectors()), ideas.data() + i * dim,
                                                   in.row_limit[i], {}, 30);
            for (std::size_t r = 0; r < near.size(); r += 4) excluded[i].push_back(near[r].row);
            for (int e = 0; e < 8; ++e) excluded[i].push_back(static_cast<std::int64_t>(rng() % n));
            in.excluded.add(excluded[i]);
        }
        return in;
    }
};

}  // namespace

TEST(DensityVariants, DefinitionsOnHandValues) {
    const std::vector<float> sims{1.0f, 0.5f, 0.0f, -1.0f};
    EXPECT_DOUBLE_EQ(density_of(sims, 2, DensityKind::mean_cosine), 0.25);
    EXPECT_DOUBLE_EQ(density_of(sims, 4, DensityKind::mean_cosine), (0 + 0.5 + 1 + 2) / 4.0);
    EXPECT_DOUBLE_EQ(density_of(sims, 3, DensityKind::kth_cosine), 1.0);
    EXPECT_DOUBLE_EQ(density_of(sims, 4, DensityKind::mean_euclidean), (0 + 1 + std::sqrt(2.0) + 2) / 4.0);
    EXPECT_THROW(density_of(sims, 5, DensityKind::mean_cosine), UsageError);
    EXPECT_THROW(density_of(sims, 0, DensityKind::kth_cosine), UsageError);
    // Ties count as "at most", as RND's count does.
    const std::vector<double> others{0.1, 0.2, 0.2, 0.4};
    EXPECT_DOUBLE_EQ(relative_rank(0.2, others), 75.0);
    EXPECT_DOUBLE_EQ(relative_rank(0.05, others), 0.0);
    EXPECT_DOUBLE_EQ(relative_rank(0.4, others), 100.0);
    EXPECT_TRUE(std::isnan(relative_rank(0.4, {})));
    for (DensityKind k : {DensityKind::mean_cosine, DensityKind::kth_cosine, DensityKind::mean_euclidean})
        EXPECT_EQ(parse_density_kind(density_kind_name(k)), k);
    EXPECT_THROW(parse_density_kind("manhattan"), UsageError);
}

TEST(NeighborProfiles, EqualBruteForceWithCutoffsAndExclusions) {
    Fixture f;
    const ScoreInput input = f.input();
    const VectorView view = VectorView::of(f.corpus.vectors());
    auto index = make_cpu_backend()->build(VectorView::of(f.corpus.vectors()));
    for (const std::size_t extra : {std::size_t{0}, std::size_t{40}}) {  // 0: many lists searched directly
        ProfileOptions options;
        options.k_idea = 25;
        options.p = 20;
        options.k_neighbor = 12;
        options.extra = extra;
        ProfileStats stats;
        const auto profiles = neighbor_profiles(f.corpus, *index, input, options, &stats);
        ASSERT_EQ(profiles.size(), f.n_ideas);
        EXPECT_EQ(stats.from_join + stats.searched, f.n_ideas * options.p);
        if (extra == 0) EXPECT_GT(stats.searched, 0u);
        else EXPECT_GT(stats.from_join, 0u);
        std::vector<float> v(f.dim);
        for (std::size_t i = 0; i < f.n_ideas; ++i) {
            const auto near = test::reference_topk(view, f.ideas.data() + i * f.dim, input.row_limit[i], f.excluded[i], 25);
            for (std::size_t r = 0; r < 25; ++r) EXPECT_NEAR(profiles[i].sims[r], near[r].sim, 1e-5);
            for (std::size_t r = 0; r < 20; ++r) {
                const std::int64_t row = profiles[i].rows[r];
                EXPECT_LT(static_cast<std::size_t>(row), input.row_limit[i]);
                f.corpus.vectors().row_as_f32(static_cast<std::size_t>(row), v.data());
                std::vector<std::int64_t> left_out = f.excluded[i];
                left_out.push_back(row);
                const auto theirs = test::reference_topk(view, v.data(), input.row_limit[i], left_out, 12);
                for (std::size_t s = 0; s < 12; ++s)
                    EXPECT_NEAR(profiles[i].neighbor(r)[s], theirs[s].sim, 1e-5) << "idea " << i << " rank " << r;
            }
        }
    }
}

TEST(NeighborProfiles, AFilterChoosesTheIdeasNeighboursButNotTheirOwnLists) {
    // As the scorer: an idea's nearest papers come from those its filter allows (here rows
    // divisible by 3), each such paper's own list from the corpus within the idea's cutoff and
    // exclusions.
    Fixture f;
    ScoreInput input = f.input();
    auto thirds = std::make_shared<RowFilter>(RowFilter::none(f.n));
    for (std::size_t r = 0; r < f.n; r += 3) thirds->allow(r);
    input.filters = {thirds};
    const VectorView view = VectorView::of(f.corpus.vectors());
    auto index = make_cpu_backend()->build(view);
    ProfileOptions options;
    options.k_idea = 15;
    options.p = 10;
    options.k_neighbor = 8;
    const auto profiles = neighbor_profiles(f.corpus, *index, input, options);
    std::vector<float> v(f.dim);
    for (std::size_t i = 0; i < f.n_ideas; ++i) {
        std::vector<std::int64_t> outside = f.excluded[i];
        for (std::size_t r = 0; r < f.n; ++r)
            if (r % 3 != 0) outside.push_back(static_cast<std::int64_t>(r));
        const auto near = test::reference_topk(view, f.ideas.data() + i * f.dim, input.row_limit[i], outside, 15);
        ASSERT_EQ(near.size(), 15u);
        for (std::size_t r = 0; r < 15; ++r) {
            EXPECT_EQ(profiles[i].rows[r] % 3, 0) << "idea " << i << " rank " << r;
            EXPECT_NEAR(profiles[i].sims[r], near[r].sim, 1e-5);
        }
        for (std::size_t r = 0; r < 10; ++r) {
            f.corpus.vectors().row_as_f32(static_cast<std::size_t>(profiles[i].rows[r]), v.data());
            std::vector<std::int64_t> left_out = f.excluded[i];
            left_out.push_back(profiles[i].rows[r]);
            const auto theirs = test::reference_topk(view, v.data(), input.row_limit[i], left_out, 8);
            for (std::size_t s = 0; s < 8; ++s)
                EXPECT_NEAR(profiles[i].neighbor(r)[s], theirs[s].sim, 1e-5) << "idea " << i << " rank " << r;
        }
    }
}

TEST(NeighborProfiles, RefusesWhatTheCorpusCannotHold) {
    Fixture f;
    auto index = make_cpu_backend()->build(VectorView::of(f.corpus.vectors()));
    ScoreInput input{f.ideas.data(), 1, f.dim, {f.corpus.rows_through(*parse_date("2000"))}, {}};
    ProfileOptions options;
    options.k_idea = 40;  // 2000 holds 15 papers
    options.p = 10;
    options.k_neighbor = 5;
    EXPECT_THROW(neighbor_profiles(f.corpus, *index, input, options), UsageError);
    options.k_idea = 5;
    EXPECT_THROW(neighbor_profiles(f.corpus, *index, input, options), UsageError);  // p > k_idea
    options.k_idea = 12;
    options.k_neighbor = 15;  // a neighbour reaches only the 14 others
    EXPECT_THROW(neighbor_profiles(f.corpus, *index, input, options), UsageError);
}

TEST(ScoreVariants, ProfileScoresEqualBruteForce) {
    Fixture f;
    const ScoreInput input = f.input();
    auto index = make_cpu_backend()->build(VectorView::of(f.corpus.vectors()));
    ProfileOptions options;
    options.k_idea = 20;
    options.p = 20;
    options.k_neighbor = 10;
    options.extra = 3;
    const auto profiles = neighbor_profiles(f.corpus, *index, input, options);
    const VectorView view = VectorView::of(f.corpus.vectors());
    for (std::size_t i = 0; i < f.n_ideas; ++i)
        for (DensityKind kind : {DensityKind::mean_cosine, DensityKind::kth_cosine, DensityKind::mean_euclidean})
            for (auto [p, q] : {std::pair<std::size_t, std::size_t>{20, 10}, {10, 3}, {5, 1}}) {
                const RankRange want = brute_rnd(f.corpus, f.ideas.data() + i * f.dim, input.row_limit[i], f.excluded[i], p,
                                                 q, kind);
                const double got = profile_rnd(profiles[i], p, q, kind);
                EXPECT_GE(got, want.low) << density_kind_name(kind) << " p " << p << " q " << q << " idea " << i;
                EXPECT_LE(got, want.high) << density_kind_name(kind) << " p " << p << " q " << q << " idea " << i;
                const auto near = test::reference_topk(view, f.ideas.data() + i * f.dim, input.row_limit[i], f.excluded[i], q);
                EXPECT_NEAR(profile_density(profiles[i], q, kind), brute_density(near, q, kind), 1e-5);
            }
    EXPECT_THROW(profile_rnd(profiles[0], 21, 5, DensityKind::mean_cosine), UsageError);
    EXPECT_THROW(profile_rnd(profiles[0], 5, 11, DensityKind::mean_cosine), UsageError);
}

TEST(ScoreVariants, ScorerDensityPEuclideanRndAndRelativeHdEqualBruteForce) {
    Fixture f;
    const ScoreInput input = f.input();
    auto index = make_cpu_backend()->build(VectorView::of(f.corpus.vectors()));
    for (auto [p, q] : {std::pair<std::size_t, std::size_t>{15, 6}, {6, 15}}) {
        ScoreOptions options;
        options.p = p;
        options.q = q;
        options.extra = 2;
        Scorer scorer(f.corpus, *index, options);
        const auto scores = scorer.score(input);
        const VectorView view = VectorView::of(f.corpus.vectors());
        for (std::size_t i = 0; i < f.n_ideas; ++i) {
            const auto near = test::reference_topk(view, f.ideas.data() + i * f.dim, input.row_limit[i], f.excluded[i], p);
            EXPECT_NEAR(scores[i].density_p, brute_density(near, p, DensityKind::mean_cosine), 1e-5);
            const RankRange want = brute_rnd(f.corpus, f.ideas.data() + i * f.dim, input.row_limit[i], f.excluded[i], p, q,
                                             DensityKind::mean_euclidean);
            EXPECT_GE(scores[i].rnd_euclid, want.low) << "idea " << i;
            EXPECT_LE(scores[i].rnd_euclid, want.high) << "idea " << i;
            // Relative HD: HD over 5 ranked among the p nearest papers' own HDs over 5.
            const RankRange rel = brute_rnd(f.corpus, f.ideas.data() + i * f.dim, input.row_limit[i], f.excluded[i], p, 5,
                                            DensityKind::mean_euclidean);
            EXPECT_GE(scores[i].rel_hd, rel.low) << "idea " << i;
            EXPECT_LE(scores[i].rel_hd, rel.high) << "idea " << i;
            EXPECT_DOUBLE_EQ(scores[i].rnd_hd, (scores[i].rnd + scores[i].rel_hd) / 2);
        }
    }
    // With q below HD's 5 neighbours the cached lists are too short: no relative HD.
    ScoreOptions short_lists;
    short_lists.p = 6;
    short_lists.q = 4;
    Scorer scorer(f.corpus, *index, short_lists);
    const auto scores = scorer.score(input);
    EXPECT_TRUE(std::isnan(scores[0].rel_hd));
    EXPECT_TRUE(std::isnan(scores[0].rnd_hd));
}

TEST(ScoreVariants, HistoricalWindowBoundsHd) {
    Fixture f;
    auto index = make_cpu_backend()->build(VectorView::of(f.corpus.vectors()));
    ScoreOptions options;
    options.p = 10;
    options.q = 5;
    const std::size_t from = f.corpus.rows_through(*parse_date("2004")), split = f.corpus.rows_through(*parse_date("2012"));
    options.split_row = split;
    options.historical_from_row = from;
    Scorer scorer(f.corpus, *index, options);
    ScoreInput input{f.ideas.data(), f.n_ideas, f.dim, {}, {}};
    const auto scores = scorer.score(input);
    const VectorView view = VectorView::of(f.corpus.vectors());
    for (std::size_t i = 0; i < f.n_ideas; ++i) {
        // Rows before `from` are left out of the historical papers; the window is [from, split).
        std::vector<std::int64_t> before;
        for (std::size_t r = 0; r < from; ++r) before.push_back(static_cast<std::int64_t>(r));
        const auto hist = test::reference_topk(view, f.ideas.data() + i * f.dim, split, before, 5);
        double hd = 0;
        for (const auto& h : hist) hd += std::sqrt(2 - 2 * h.sim);
        EXPECT_NEAR(scores[i].hd, hd / 5, 1e-5) << "idea " << i;
    }
    // An empty window gives no HD (null), not an error.
    options.historical_from_row = split;
    Scorer empty(f.corpus, *index, options);
    EXPECT_TRUE(std::isnan(empty.score(input)[0].hd));
}
