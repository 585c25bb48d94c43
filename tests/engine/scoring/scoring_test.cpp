// RND against a direct implementation of the paper's Algorithm 2 (P + 1 brute-force k-NN
// searches per idea), with and without the literal include-self reading; cutoffs and exclusions;
// and the domain-invariance property on a synthetic corpus of a dense and a sparse field.
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/scoring/scoring.hpp"
#include "search/search_counters.hpp"
#include "scoring_corpus.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace novelty;
using novelty::test::TempDir;

namespace {

// A corpus of n papers (years 2000..2019 in turn) with the given unit vectors.
std::string make_corpus(const TempDir& tmp, const std::vector<float>& vectors, std::size_t dim,
                        const std::vector<std::string>& fields = {}) {
    return test::make_scoring_corpus(tmp, vectors, dim, fields);
}

struct Direct {
    double rnd_low, rnd_high;  // the count's range when ND values within 1e-6 of ND_i may tie
    double nd;
};

// Algorithm 2 taken literally, in double precision, by brute force.
Direct algorithm2(const Corpus& corpus, const float* idea, std::size_t limit, std::vector<std::int64_t> excluded,
                  std::size_t p, std::size_t q, bool include_self) {
    const VectorView view = VectorView::of(corpus.vectors());
    const auto neighbors = test::reference_topk(view, idea, limit, excluded, std::max(p, q));
    double nd_idea = 0;
    for (std::size_t r = 0; r < q; ++r) nd_idea += 1.0 - neighbors[r].sim;
    nd_idea /= static_cast<double>(q);
    std::size_t low = 0, high = 0;
    std::vector<float> v(view.dim);
    for (std::size_t j = 0; j < p; ++j) {
        const std::int64_t row = neighbors[j].row;
        corpus.vectors().row_as_f32(static_cast<std::size_t>(row), v.data());
        std::vector<std::int64_t> left_out = excluded;
        if (!include_self) left_out.push_back(row);  // literal reading: the paper finds itself first
        const auto theirs = test::reference_topk(view, v.data(), limit, left_out, q);
        double nd = 0;
        for (const auto& hit : theirs) nd += 1.0 - hit.sim;
        nd /= static_cast<double>(q);
        low += nd <= nd_idea - 1e-6;
        high += nd <= nd_idea + 1e-6;
    }
    return {100.0 * low / p, 100.0 * high / p, nd_idea};
}

}  // namespace

TEST(Scoring, RndEqualsTheDirectAlgorithmWithCutoffsAndExclusions) {
    TempDir tmp;
    const std::size_t n = 400, dim = 12, n_ideas = 12;
    const auto vectors = test::random_unit_rows(n, dim, 5);
    const Corpus corpus = Corpus::open(make_corpus(tmp, vectors, dim));
    const auto ideas = test::random_unit_rows(n_ideas, dim, 6);
    auto backend = make_cpu_backend();
    backend->tuning.query_tile = 32;  // several blocks in the self-join
    std::mt19937 rng(7);
    for (const bool include_self : {false, true}) {
        ScoreOptions options;
        options.p = 20;
        options.q = 10;
        options.extra = 2;  // exclusions often exhaust the cached extras: the direct path runs too
        options.include_self = include_self;
        const auto index_scorer = backend->build(VectorView::of(corpus.vectors()));
        Scorer scorer(corpus, *index_scorer, options);
        ScoreInput input{ideas.data(), n_ideas, dim, {}, {}};
        std::vector<std::vector<std::int64_t>> excluded(n_ideas);
        for (std::size_t i = 0; i < n_ideas; ++i) {
            input.row_limit.push_back(i % 3 == 0 ? n : corpus.rows_through(*parse_date(std::to_string(2008 + i))));
            // Leave out some of the idea's own nearest papers and some at random.
            const auto near = test::reference_topk(VectorView::of(corpus.vectors()), ideas.data() + i * dim,
                                                   input.row_limit[i], {}, 40);
            for (std::size_t r = 0; r < near.size(); r += 3) excluded[i].push_back(near[r].row);
            for (int e = 0; e < 10; ++e) excluded[i].push_back(static_cast<std::int64_t>(rng() % n));
            input.excluded.add(excluded[i]);
        }
        const auto scores = scorer.score(input);
        for (std::size_t i = 0; i < n_ideas; ++i) {
            const Direct direct = algorithm2(corpus, ideas.data() + i * dim, input.row_limit[i], excluded[i], options.p,
                                             options.q, include_self);
            EXPECT_NEAR(scores[i].nd, direct.nd, 1e-5);
            EXPECT_GE(scores[i].rnd, direct.rnd_low) << "idea " << i << " include_self " << include_self;
            EXPECT_LE(scores[i].rnd, direct.rnd_high) << "idea " << i << " include_self " << include_self;
            for (std::int64_t row : scores[i].neighbor_rows) {
                EXPECT_LT(static_cast<std::size_t>(row), input.row_limit[i]);
                EXPECT_EQ(std::count(excluded[i].begin(), excluded[i].end(), row), 0);
            }
        }
    }
}

TEST(Scoring, HdAndOnFollowTheSplit) {
    TempDir tmp;
    const std::size_t n = 200, dim = 8;
    const auto vectors = test::random_unit_rows(n, dim, 11);
    const Corpus corpus = Corpus::open(make_corpus(tmp, vectors, dim));
    const auto ideas = test::random_unit_rows(3, dim, 12);
    auto backend = make_cpu_backend();
    ScoreOptions options;
    options.p = 10;
    options.q = 5;
    const std::size_t split = corpus.rows_through(*parse_date("2009"));
    options.split_row = split;
    const auto index_scorer = backend->build(VectorView::of(corpus.vectors()));
    Scorer scorer(corpus, *index_scorer, options);
    const auto scores = scorer.score(ScoreInput{ideas.data(), 3, dim, {}, {}});
    const VectorView view = VectorView::of(corpus.vectors());
    for (std::size_t i = 0; i < 3; ++i) {
        const auto hist = test::reference_topk(view, ideas.data() + i * dim, split, {}, 5);
        double hd = 0;
        for (const auto& h : hist) hd += std::sqrt(2 - 2 * h.sim);
        EXPECT_NEAR(scores[i].hd, hd / 5, 1e-5);
        // Contemporary: rows [split, n).
        std::vector<std::int64_t> before;
        for (std::size_t r = 0; r < split; ++r) before.push_back(static_cast<std::int64_t>(r));
        const auto cont = test::reference_topk(view, ideas.data() + i * dim, n, before, 5);
        double cd = 0, ci = 0;
        for (const auto& h : cont) {
            cd += std::sqrt(2 - 2 * h.sim);
            ci += static_cast<double>(*corpus.paper(static_cast<std::size_t>(h.row)).citations);
        }
        ASSERT_TRUE(scores[i].on);
        EXPECT_NEAR(*scores[i].on, (hd / 5) * (ci / 5) / (cd / 5), 1e-4);
    }
    // Without a split, ON is null and HD uses the whole corpus.
    const auto index_plain = backend->build(VectorView::of(corpus.vectors()));
    Scorer plain(corpus, *index_plain, ScoreOptions{10, 5});
    const auto unsplit = plain.score(ScoreInput{ideas.data(), 3, dim, {}, {}});
    EXPECT_FALSE(unsplit[0].on);
}

TEST(Scoring, RndIsComparableAcrossADenseAndASparseField) {
    // Field A is tight around its centre, field B loose around another: absolute densities (HD,
    // ND) separate the fields, RND's distribution does not.
    TempDir tmp;
    const std::size_t dim = 16, per_field = 600, ideas_per_field = 60;
    std::mt19937 rng(21);
    std::normal_distribution<float> normal;
    std::vector<float> centre_a(dim), centre_b(dim);
    for (std::size_t c = 0; c < dim; ++c) {
        centre_a[c] = normal(rng);
        centre_b[c] = normal(rng);
    }
    auto draw = [&](const std::vector<float>& centre, float spread, std::vector<float>& out) {
        double norm = 0;
        const std::size_t at = out.size();
        for (std::size_t c = 0; c < dim; ++c) {
            out.push_back(centre[c] + spread * normal(rng));
            norm += double(out.back()) * out.back();
        }
        for (std::size_t c = 0; c < dim; ++c) out[at + c] = static_cast<float>(out[at + c] / std::sqrt(norm));
    };
    std::vector<float> corpus_vectors, ideas;
    std::vector<std::string> fields;
    for (std::size_t i = 0; i < per_field; ++i) {
        draw(centre_a, 0.15f, corpus_vectors);
        fields.push_back("dense");
        draw(centre_b, 0.9f, corpus_vectors);
        fields.push_back("sparse");
    }
    for (std::size_t i = 0; i < ideas_per_field; ++i) draw(centre_a, 0.15f, ideas);
    for (std::size_t i = 0; i < ideas_per_field; ++i) draw(centre_b, 0.9f, ideas);
    const Corpus corpus = Corpus::open(make_corpus(tmp, corpus_vectors, dim, fields));
    auto backend = make_cpu_backend();
    const auto index_scorer = backend->build(VectorView::of(corpus.vectors()));
    Scorer scorer(corpus, *index_scorer, ScoreOptions{50, 20});
    const auto scores = scorer.score(ScoreInput{ideas.data(), 2 * ideas_per_field, dim, {}, {}});
    auto ks = [&](auto value) {
        std::vector<double> a, b;
        for (std::size_t i = 0; i < ideas_per_field; ++i) {
            a.push_back(value(scores[i]));
            b.push_back(value(scores[ideas_per_field + i]));
        }
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        double d = 0;
        std::size_t ia = 0, ib = 0;
        while (ia < a.size() && ib < b.size()) {
            const double x = std::min(a[ia], b[ib]);
            while (ia < a.size() && a[ia] <= x) ++ia;
            while (ib < b.size() && b[ib] <= x) ++ib;
            d = std::max(d, std::fabs(double(ia) / a.size() - double(ib) / b.size()));
        }
        return d;
    };
    const double ks_rnd = ks([](const IdeaScore& s) { return s.rnd; });
    const double ks_hd = ks([](const IdeaScore& s) { return s.hd; });
    RecordProperty("ks_rnd", std::to_string(ks_rnd));
    RecordProperty("ks_hd", std::to_string(ks_hd));
    EXPECT_LT(ks_rnd, 0.3) << "RND distributions differ between fields";
    EXPECT_GT(ks_hd, 0.9) << "HD should separate the fields completely";
}

TEST(Scoring, OneIndexServesEveryBatchWithASplit) {
    // score --split searches the idea's neighbours, its historical papers and its contemporary
    // window [split, cutoff) in the one index it is given, batch after batch: no other index
    // (on a GPU: no other upload of the corpus) is built.
    TempDir tmp;
    const std::size_t n = 200, dim = 8;
    const auto vectors = test::random_unit_rows(n, dim, 41);
    const Corpus corpus = Corpus::open(make_corpus(tmp, vectors, dim));
    const auto index = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
    ScoreOptions options;
    options.p = 10;
    options.q = 5;
    options.split_row = corpus.rows_through(*parse_date("2009"));
    Scorer scorer(corpus, *index, options);
    const std::size_t built = search_indexes_built();
    for (std::uint32_t batch = 0; batch < 3; ++batch) {
        const auto ideas = test::random_unit_rows(4, dim, 50 + batch);
        const auto scores = scorer.score(ScoreInput{ideas.data(), 4, dim, {n, n, 150, 120}, {}});
        for (const auto& s : scores) EXPECT_TRUE(s.on.has_value());
    }
    EXPECT_EQ(search_indexes_built(), built);
}

TEST(Scoring, ScorerRefusesAnIndexOfOtherRows) {
    TempDir tmp;
    const auto vectors = test::random_unit_rows(60, 4, 42);
    const Corpus corpus = Corpus::open(make_corpus(tmp, vectors, 4));
    const auto other = make_cpu_backend()->build(VectorView::of(vectors, 4));
    EXPECT_THROW(Scorer(corpus, *other, ScoreOptions{10, 5}), UsageError);
}

TEST(Scoring, PAndQBeyondTheCutoffAreErrors) {
    TempDir tmp;
    const auto vectors = test::random_unit_rows(50, 4, 31);
    const Corpus corpus = Corpus::open(make_corpus(tmp, vectors, 4));
    auto backend = make_cpu_backend();
    const auto index_scorer = backend->build(VectorView::of(corpus.vectors()));
    Scorer scorer(corpus, *index_scorer, ScoreOptions{10, 5});
    const auto ideas = test::random_unit_rows(1, 4, 32);
    ScoreInput input{ideas.data(), 1, 4, {corpus.rows_through(*parse_date("2001"))}, {}};  // 5 rows
    EXPECT_THROW(scorer.score(input), UsageError);
}

namespace novelty {
namespace {

TEST(ScoreInputOf, TakesTheVectorsLimitsExclusionsAndFiltersOfASearch) {
    const std::vector<float> vectors = {1, 0, 0, 1, 0.5f, 0.5f};
    SearchQueries queries{vectors.data(), 3, 2};
    queries.scope.row_limit = {4, 9, 2};
    queries.scope.excluded.add({3});
    queries.scope.excluded.add({});
    queries.scope.excluded.add({1, 0});
    queries.scope.filters = {std::make_shared<RowFilter>(RowFilter::none(10))};
    const ScoreInput input = ScoreInput::of(queries);
    EXPECT_EQ(input.vectors, vectors.data());
    EXPECT_EQ(input.n_ideas, 3u);
    EXPECT_EQ(input.dim, 2u);
    EXPECT_EQ(input.row_limit, queries.scope.row_limit);
    EXPECT_EQ(input.excluded.offsets, queries.scope.excluded.offsets);
    EXPECT_EQ(input.excluded.rows, queries.scope.excluded.rows);
    ASSERT_EQ(input.filters.size(), 1u);
    EXPECT_EQ(input.filters[0], queries.scope.filters[0]);
}

}  // namespace
}  // namespace novelty
