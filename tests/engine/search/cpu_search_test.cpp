// The CPU backend against the naive double-precision reference, where it has more to show than
// the conformance suite every backend passes (tests/engine/search/search_conformance_test.cpp): exact ties
// by lower row, float16 corpora, its two self-join algorithms, query checks: random data of several shapes,
// exact ties, prefixes, exclusions, the self-join, candidate lists and argument errors.
#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"
#include "novelty/search/search.hpp"
#include "search_reference.hpp"
#include "search/cpu/scan_at_least.hpp"
#include "search/cpu/topk_heap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <set>

using namespace novelty;
using novelty::test::random_unit_rows;
using novelty::test::reference_topk;
using novelty::test::RefHit;

namespace {

constexpr double sim_tolerance = 2e-5;

// True similarity of a corpus row to a query, in double.
double true_sim(const VectorView& corpus, const float* query, std::int64_t row) {
    double dot = 0, norm = 0;
    for (std::size_t c = 0; c < corpus.dim; ++c) {
        dot += test::element(corpus, row, c) * query[c];
        norm += double(query[c]) * query[c];
    }
    return dot / std::sqrt(norm);
}

// Checks query i of `top` against the reference, tolerating rounding-level near-ties.
void expect_matches(const TopK& top, std::size_t i, const std::vector<RefHit>& ref, const VectorView& corpus,
                    const float* query, bool exact, const std::string& label) {
    ASSERT_EQ(top.count[i], ref.size()) << label << " query " << i;
    std::set<std::int64_t> seen;
    for (std::size_t r = 0; r < ref.size(); ++r) {
        const std::int64_t row = top.row(i, r);
        EXPECT_TRUE(seen.insert(row).second) << label << ": row " << row << " returned twice";
        if (exact) {
            EXPECT_EQ(row, ref[r].row) << label << " query " << i << " rank " << r;
            EXPECT_EQ(top.sim(i, r), static_cast<float>(ref[r].sim)) << label << " query " << i << " rank " << r;
            continue;
        }
        EXPECT_NEAR(top.sim(i, r), ref[r].sim, sim_tolerance) << label << " query " << i << " rank " << r;
        if (row != ref[r].row)  // only a near-tie may swap places
            EXPECT_NEAR(true_sim(corpus, query, row), ref[r].sim, 2 * sim_tolerance)
                << label << " query " << i << " rank " << r << ": row " << row << " instead of " << ref[r].row;
        if (r > 0) EXPECT_GE(top.sim(i, r - 1), top.sim(i, r)) << label;
    }
    for (std::size_t r = ref.size(); r < top.k; ++r) {
        EXPECT_EQ(top.row(i, r), -1);
        EXPECT_EQ(top.sim(i, r), -INFINITY);
    }
}

struct Shape {
    std::size_t n_corpus, n_queries, dim, k;
};

}  // namespace

TEST(TopKCollector, KeepsBestAndBreaksTiesByLowerRowInAnyOrder) {
    // k = 3 over 2k = 6 slots: the offers below force two compactions.
    std::vector<ScoredRow> storage(6);
    TopKCollector top(storage.data(), 3);
    EXPECT_EQ(top.threshold(), -INFINITY);
    for (auto [sim, row] : std::vector<std::pair<float, int>>{{0.5f, 7}, {0.9f, 3}, {0.5f, 9}, {0.1f, 1}, {0.7f, 8},
                                                             {0.2f, 4}, {0.5f, 2}, {0.05f, 0}, {0.3f, 5}, {0.6f, 6},
                                                             {0.5f, 10}, {0.95f, 11}})
        top.push(sim, row);
    ASSERT_EQ(top.sort_best_first(), 3u);
    EXPECT_EQ(storage[0].row, 11);
    EXPECT_EQ(storage[1].row, 3);
    EXPECT_EQ(storage[2].row, 8);
    // Exact ties at the boundary, offered with the lowest row last.
    std::vector<ScoredRow> tie_storage(4);
    TopKCollector ties(tie_storage.data(), 2);
    for (int row : {9, 8, 7, 6, 5, 4, 3, 2}) ties.push(0.5f, row);
    ASSERT_EQ(ties.sort_best_first(), 2u);
    EXPECT_EQ(tie_storage[0].row, 2);
    EXPECT_EQ(tie_storage[1].row, 3);
    // Fewer offers than k.
    TopKCollector few(tie_storage.data(), 2);
    few.push(0.1f, 4);
    EXPECT_EQ(few.sort_best_first(), 1u);
}

// The output rule the CPU search, the exact re-score and best_of share: best first, then padding.
TEST(TopKCollector, WritesTheBestFirstAndPadsTheRest) {
    std::vector<ScoredRow> storage(6);
    TopKCollector top(storage.data(), 3);
    top.push(0.25f, 7);
    top.push(0.5f, 9);
    std::vector<std::int64_t> rows(3, 42);
    std::vector<float> sims(3, 42.0f);
    EXPECT_EQ(top.write_best_first(rows.data(), sims.data()), 2u);
    EXPECT_EQ(rows, (std::vector<std::int64_t>{9, 7, -1}));
    EXPECT_EQ(sims, (std::vector<float>{0.5f, 0.25f, -INFINITY}));
}

TEST(CpuSearch, ExactTiesGoToTheLowerRow) {
    // Entries of +-0.5 in dim 4 have norm 1 exactly and every dot product is a multiple of 0.25,
    // so there are only 16 distinct rows and float arithmetic is exact: ties are real ties.
    const std::size_t n = 500, dim = 4;
    std::mt19937 rng(5);
    std::vector<float> values(n * dim);
    for (float& x : values) x = (rng() & 1) ? 0.5f : -0.5f;
    const VectorView corpus = VectorView::of(values, dim);
    std::vector<float> query_values(values.begin(), values.begin() + 8 * dim);
    SearchQueries queries{query_values.data(), 8, dim};
    auto backend = make_cpu_backend();
    for (const SearchTuning tuning : {SearchTuning{}, SearchTuning{3, 7, 2}}) {
        backend->tuning = tuning;
        for (std::size_t k : {1, 50, 499, 500, 2048}) {
            const TopK top = backend->build(corpus)->search(queries, k);
            for (std::size_t i = 0; i < 8; ++i)
                expect_matches(top, i, reference_topk(corpus, query_values.data() + i * dim, n, {}, k), corpus,
                               query_values.data() + i * dim, true, "ties k=" + std::to_string(k));
        }
    }
    // dim 1: every similarity is +1 or -1.
    std::vector<float> line(300);
    for (std::size_t i = 0; i < line.size(); ++i) line[i] = (i % 3 == 0) ? -1.0f : 1.0f;
    const float up = 1.0f;
    const TopK top = backend->build(VectorView::of(line, 1))->search(SearchQueries{&up, 1, 1}, 10);
    EXPECT_EQ(top.row(0, 0), 1);
    EXPECT_EQ(top.row(0, 1), 2);
    EXPECT_EQ(top.row(0, 2), 4);
    EXPECT_EQ(top.sim(0, 9), 1.0f);
}

TEST(CpuSearch, HalfPrecisionCorpus) {
    const std::size_t n = 1200, dim = 384, n_queries = 10, k = 50;
    const auto values = random_unit_rows(n, dim, 3);
    std::vector<std::uint16_t> halves(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) halves[i] = float_to_half(values[i]);
    const VectorView corpus{halves.data(), DType::f16, n, dim};
    const auto query_values = random_unit_rows(n_queries, dim, 4);
    auto backend = make_cpu_backend();
    backend->tuning = SearchTuning{4, 100, 2};
    const TopK top = backend->build(corpus)->search(SearchQueries{query_values.data(), n_queries, dim}, k);
    for (std::size_t i = 0; i < n_queries; ++i)
        expect_matches(top, i, reference_topk(corpus, query_values.data() + i * dim, n, {}, k), corpus,
                       query_values.data() + i * dim, false, "f16");
}

TEST(CpuSearch, SelfJoinMatchesBruteForce) {
    const std::size_t n = 700, dim = 24, q = 10, k_stored = 14;
    const auto values = random_unit_rows(n, dim, 31);
    const VectorView corpus = VectorView::of(values, dim);
    auto backend = make_cpu_backend();
    // Symmetric (block pairs) and, with a tiny memory budget, block-by-block.
    for (const SearchTuning tuning : {SearchTuning{16, 50, 2, 0}, SearchTuning{64, 50, 2, 1}})
    for (std::size_t prefix : {n, std::size_t(300), std::size_t(11), std::size_t(8)}) {
        backend->tuning = tuning;
        std::size_t last_done = 0, last_total = 0;
        const SelfJoin join = backend->build(corpus)->self_join(prefix, q, k_stored, [&](std::size_t done, std::size_t total) {
            EXPECT_GE(done, last_done);
            last_done = done;
            last_total = total;
        });
        EXPECT_EQ(last_done, last_total);
        ASSERT_EQ(join.n_rows, prefix);
        ASSERT_EQ(join.density.size(), prefix);
        for (std::size_t row = 0; row < prefix; ++row) {
            const float* self = values.data() + row * dim;
            const auto ref = reference_topk(corpus, self, prefix, {static_cast<std::int64_t>(row)}, k_stored);
            for (std::size_t r = 0; r < k_stored; ++r) {
                if (r < ref.size()) {
                    EXPECT_NEAR(join.sims[row * k_stored + r], ref[r].sim, sim_tolerance);
                    EXPECT_NE(join.rows[row * k_stored + r], static_cast<std::int64_t>(row));
                } else {
                    EXPECT_EQ(join.rows[row * k_stored + r], -1);
                }
            }
            if (ref.size() < q) {
                EXPECT_TRUE(std::isnan(join.density[row])) << "prefix " << prefix;
                continue;
            }
            double expected = 0;
            for (std::size_t r = 0; r < q; ++r) expected += 1.0 - ref[r].sim;
            EXPECT_NEAR(join.density[row], expected / q, 1e-5) << "row " << row << " prefix " << prefix;
        }
    }
}

TEST(CpuSearch, SelfJoinTiesGoToTheLowerRow) {
    // +-0.5 entries in dim 4: exact arithmetic, 16 distinct rows, ties everywhere.
    const std::size_t n = 300, dim = 4, q = 5, k_stored = 40;
    std::mt19937 rng(9);
    std::vector<float> values(n * dim);
    for (float& x : values) x = (rng() & 1) ? 0.5f : -0.5f;
    const VectorView corpus = VectorView::of(values, dim);
    auto backend = make_cpu_backend();
    for (const SearchTuning tuning : {SearchTuning{7, 50, 2, 0}, SearchTuning{64, 50, 2, 0}, SearchTuning{32, 50, 2, 1}}) {
        backend->tuning = tuning;
        const SelfJoin join = backend->build(corpus)->self_join(n, q, k_stored);
        for (std::size_t row = 0; row < n; ++row) {
            const auto ref = reference_topk(corpus, values.data() + row * dim, n, {static_cast<std::int64_t>(row)}, k_stored);
            for (std::size_t r = 0; r < k_stored; ++r) {
                ASSERT_EQ(join.rows[row * k_stored + r], ref[r].row) << "row " << row << " rank " << r;
                ASSERT_EQ(join.sims[row * k_stored + r], static_cast<float>(ref[r].sim));
            }
        }
    }
}

TEST(CpuSearch, QueriesAreNormalisedForTheCaller) {
    const std::size_t n = 100, dim = 8;
    const auto values = random_unit_rows(n, dim, 51);
    std::vector<float> query(values.begin() + 3 * dim, values.begin() + 4 * dim);
    for (float& x : query) x *= 7.5f;
    const TopK top = make_cpu_backend()->build(VectorView::of(values, dim))->search(SearchQueries{query.data(), 1, dim}, 1);
    EXPECT_EQ(top.row(0, 0), 3);
    EXPECT_NEAR(top.sim(0, 0), 1.0, 1e-6);
}

TEST(CpuSearch, NamesTheLowestBadQueryWhateverTheThreadOrder) {
    // 2,000 queries span several normalisation blocks; the bad ones sit in different blocks,
    // the lowest last in its block, so a thread that finishes first must not decide the message.
    const std::size_t dim = 8, n = 2000;
    const auto corpus_values = random_unit_rows(10, dim, 62);
    auto queries = random_unit_rows(n, dim, 63);
    auto message_for = [&](const std::vector<float>& values) {
        try {
            make_cpu_backend()->build(VectorView::of(corpus_values, dim))->search(SearchQueries{values.data(), n, dim}, 1);
        } catch (const UsageError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    auto with_zero = queries;
    for (std::size_t bad : {1900, 1300, 767})
        std::fill(with_zero.begin() + bad * dim, with_zero.begin() + (bad + 1) * dim, 0.0f);
    EXPECT_NE(message_for(with_zero).find("query 767 is a zero vector"), std::string::npos) << message_for(with_zero);
    with_zero[1000 * dim + 3] = INFINITY;
    EXPECT_NE(message_for(with_zero).find("query 767 is a zero vector"), std::string::npos);
    with_zero[512 * dim + 5] = NAN;
    EXPECT_NE(message_for(with_zero).find("query 512 contains NaN or Inf"), std::string::npos) << message_for(with_zero);
}

TEST(CpuSearch, ScaledQueriesOfManyBlocksFindTheirOwnRows) {
    // Each query is a corpus row scaled by its own factor; normalisation in parallel blocks must
    // map every one back to its row with similarity 1.
    const std::size_t dim = 16, n = 1500;
    const auto values = random_unit_rows(n, dim, 64);
    std::vector<float> scaled = values;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < dim; ++c) scaled[i * dim + c] *= 0.25f + float(i % 37);
    const TopK top = make_cpu_backend()->build(VectorView::of(values, dim))->search(SearchQueries{scaled.data(), n, dim}, 1);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(top.row(i, 0), static_cast<std::int64_t>(i)) << i;
        ASSERT_NEAR(top.sim(i, 0), 1.0, 1e-5) << i;
    }
}

TEST(CpuSearch, RejectsBadArguments) {
    const std::size_t dim = 4;
    const auto values = random_unit_rows(10, dim, 61);
    const VectorView corpus = VectorView::of(values, dim);
    std::vector<float> query(values.begin(), values.begin() + dim);
    const SearchQueries one{query.data(), 1, dim};
    auto backend = make_cpu_backend();
    auto message = [&](auto&& call) {
        try {
            call();
        } catch (const UsageError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message([&] { backend->build(corpus)->search(one, 0); }).find("k must be between 1 and 2048"), std::string::npos);
    EXPECT_NE(message([&] { backend->build(corpus)->search(one, 2049); }).find("not 2049"), std::string::npos);
    EXPECT_NE(message([&] { backend->build(VectorView{values.data(), DType::f32, 0, dim})->search(one, 1); }).find("empty"),
              std::string::npos);
    std::vector<float> nan_query{1.0f, NAN, 0.0f, 0.0f};
    EXPECT_NE(message([&] { backend->build(corpus)->search(SearchQueries{nan_query.data(), 1, dim}, 1); })
                  .find("query 0 contains NaN or Inf"),
              std::string::npos);
    std::vector<float> zero_query(dim, 0.0f);
    EXPECT_NE(message([&] { backend->build(corpus)->search(SearchQueries{zero_query.data(), 1, dim}, 1); })
                  .find("query 0 is a zero vector"),
              std::string::npos);
    EXPECT_NE(message([&] { backend->build(corpus)->search(SearchQueries{query.data(), 1, 3}, 1); })
                  .find("dimension mismatch: the queries have dimension 3 but the corpus has 4"),
              std::string::npos);
    EXPECT_NE(message([&] { backend->build(corpus)->search(SearchQueries{query.data(), 1, dim, SearchScope{{}, {1, 2}, {}, {}, -1}}, 1); })
                  .find("row_limit has 2 entries for 1 queries"),
              std::string::npos);
    EXPECT_NE(message([&] { backend->build(corpus)->self_join(10, 5, 4); }).find("k_stored must be at least q"),
              std::string::npos);
    EXPECT_NE(message([&] { backend->build(corpus)->self_join(11, 1, 1); }).find("prefix"), std::string::npos);
    RowLists bad;
    bad.add({10});
    EXPECT_NE(message([&] { backend->build(corpus)->search_candidates(one, bad, 1); }).find("outside the corpus"),
              std::string::npos);
}

TEST(ScanAtLeast, MatchesAScalarFilterAtEveryLengthAndThreshold) {
    std::mt19937 rng(71);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(1000);
    for (float& v : values) v = uniform(rng);
    values[17] = NAN;
    values[40] = 0.5f;
    values[41] = 0.5f;
    std::vector<std::uint32_t> out(values.size());
    for (std::size_t n : {0, 1, 15, 16, 17, 31, 32, 33, 255, 1000})
        for (float threshold : {-INFINITY, -0.5f, 0.0f, 0.5f, 0.99f, 2.0f}) {
            const std::size_t count = scan_at_least(values.data(), n, threshold, out.data());
            std::vector<std::uint32_t> expected;
            for (std::size_t j = 0; j < n; ++j)
                if (values[j] >= threshold) expected.push_back(static_cast<std::uint32_t>(j));
            ASSERT_EQ(std::vector<std::uint32_t>(out.begin(), out.begin() + count), expected)
                << "n=" << n << " threshold=" << threshold;
        }
    // One threshold per entry.
    std::vector<float> thresholds(values.size());
    for (float& t : thresholds) t = uniform(rng);
    thresholds[5] = -INFINITY;
    thresholds[40] = 0.5f;  // equal passes
    for (std::size_t n : {0, 1, 16, 17, 100, 1000}) {
        const std::size_t count = scan_at_least_each(values.data(), thresholds.data(), n, out.data());
        std::vector<std::uint32_t> expected;
        for (std::size_t j = 0; j < n; ++j)
            if (values[j] >= thresholds[j]) expected.push_back(static_cast<std::uint32_t>(j));
        ASSERT_EQ(std::vector<std::uint32_t>(out.begin(), out.begin() + count), expected) << "n=" << n;
    }
}

// OpenBLAS's sgemm can change the last bit of a product with the tile's shape and the row's
// place in it; the reported similarities are re-scored in one fixed order, so any tiling and
// thread count gives the same bits (what a sharded index relies on to match one process).
TEST(CpuSearch, SimilaritiesDoNotDependOnTilesOrThreads) {
    const std::size_t n = 3000, dim = 384, n_queries = 300, k = 12;
    const auto corpus = novelty::test::random_unit_rows(n, dim, 31);
    const auto queries_f = novelty::test::random_unit_rows(n_queries, dim, 32);
    novelty::SearchQueries queries{queries_f.data(), n_queries, dim};
    auto reference = novelty::make_cpu_backend()->build(novelty::VectorView::of(corpus, dim));
    const novelty::TopK expected = reference->search(queries, k);
    const novelty::SelfJoin expected_join = reference->self_join(1500, 5, k);
    for (const auto& [query_tile, corpus_tile, threads] :
         std::vector<std::array<std::size_t, 3>>{{37, 333, 1}, {300, 2999, 2}, {1, 64, 2}, {512, 1000, 1}}) {
        auto index = novelty::make_cpu_backend()->build(novelty::VectorView::of(corpus, dim));
        index->tuning = {query_tile, corpus_tile, threads, 0};
        const novelty::TopK top = index->search(queries, k);
        EXPECT_EQ(top.rows, expected.rows) << query_tile << " x " << corpus_tile;
        EXPECT_EQ(0, std::memcmp(top.sims.data(), expected.sims.data(), top.sims.size() * sizeof(float)))
            << query_tile << " x " << corpus_tile;
        index->tuning.self_join_memory = query_tile == 1 ? 1 : 0;  // both of the join's paths
        const novelty::SelfJoin join = index->self_join(1500, 5, k);
        EXPECT_EQ(join.rows, expected_join.rows);
        EXPECT_EQ(0, std::memcmp(join.sims.data(), expected_join.sims.data(), join.sims.size() * sizeof(float)));
    }
}
