// One conformance suite for every search backend, in the manner of ggml's test-backend-ops:
// each scenario runs on {cpu, cpu-bf16 (bf16 storage, screened by vdpbf16ps where the CPU has
// AVX512-BF16), cpu-bf16-sgemm (bf16 storage screened by sgemm on widened rows), cpu-int8 (int8
// storage, screened by vpdpbusd where the CPU has AVX512-VNNI), cpu-int8-sgemm, cuda-f32,
// cuda-f16, cuda-bf16, cuda-f16-t16 (float16 storage with 16-bit similarity tiles,
// docs/cuda.md)} and is checked against the naive
// double-precision reference (search_reference.hpp) with one tolerance per backend. The CUDA
// variants skip without CUDA compiled in or without a device; tests/gpu/ keeps only what is
// particular to the device (profiles, memory budgets, device errors).
//
// A result conforms when, for every query: it holds min(k, searchable rows) neighbours; its
// similarities agree with the reference's rank by rank within the tolerance; and every row it
// names is searchable (inside the query's row range, not excluded, not repeated) and has that
// similarity to the query (within the tolerance). Ties may then be broken either way, as
// DESIGN.md says: similarity values are compared, not ids.
#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/half.hpp"
#include "search_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace novelty {
namespace {

struct BackendCase {
    /// cpu, cpu-bf16(-sgemm), cpu-int8(-sgemm), cuda-f32, cuda-f16, cuda-bf16, cuda-f16-t16, and
    /// the same CUDA cases on the emulated device (emu-f32, ...), which run in every build.
    std::string name;
    float tolerance = 0;    ///< on similarities
    /// On a float16 corpus (stored exactly in every storage but bf16): the rows must be the
    /// reference's wherever its similarities are apart by more than this; 0: not checked (the
    /// backend ranks by similarities of rounded queries or rows).
    float exact_gap = 0;
};

void PrintTo(const BackendCase& c, std::ostream* os) { *os << c.name; }

std::string case_name(const ::testing::TestParamInfo<BackendCase>& info) {
    std::string name = info.param.name;
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

class SearchConformance : public ::testing::TestWithParam<BackendCase> {
protected:
    void SetUp() override {
        if (GetParam().name.rfind("cpu", 0) == 0 || GetParam().name.rfind("emu-", 0) == 0) return;
        if (!cuda_compiled()) GTEST_SKIP() << "CUDA is not compiled into this build";
        if (list_devices().empty()) GTEST_SKIP() << "no CUDA device";
    }

    /// The backend under test; `memory_budget` (bytes, CUDA only) small enough streams the corpus.
    std::unique_ptr<SearchBackend> backend(std::size_t memory_budget = 0) const {
        const std::string& name = GetParam().name;
        if (name == "cpu") return make_cpu_backend();
        if (name.rfind("cpu-bf16", 0) == 0 || name.rfind("cpu-int8", 0) == 0) {
            CpuBackendOptions cpu;
            cpu.storage = parse_cpu_storage(name.substr(4, 4));
            cpu.screen_instructions = name.find("-sgemm") == std::string::npos;
            return make_cpu_backend(cpu);
        }
        CudaBackendOptions options;
        options.emulated = name.rfind("emu-", 0) == 0;
        const std::size_t first = name.find('-') + 1;
        const std::string storage = name.substr(first, name.find('-', first) - first);
        options.storage = parse_storage(storage);
        if (name.size() > 4 && name.substr(name.size() - 4) == "-t16") options.similarity_tile = DeviceStorage::f16;
        options.memory_budget = memory_budget;
        return make_cuda_backend(options);
    }

    float tolerance() const { return GetParam().tolerance; }
    float exact_gap() const { return GetParam().exact_gap; }
};

using test::make_queries;

std::vector<std::int64_t> excluded_of(const SearchQueries& q, std::size_t i) {
    if (q.scope.excluded.n_items() == 0) return {};
    return std::vector<std::int64_t>(q.scope.excluded.begin(i), q.scope.excluded.begin(i) + q.scope.excluded.size(i));
}

/// Double-precision similarity of query i to corpus row `row`.
double exact_sim(const VectorView& corpus, const SearchQueries& q, std::size_t i, std::int64_t row) {
    double dot = 0, norm = 0;
    for (std::size_t c = 0; c < q.dim; ++c) {
        dot += test::element(corpus, static_cast<std::size_t>(row), c) * q.vectors[i * q.dim + c];
        norm += double(q.vectors[i * q.dim + c]) * q.vectors[i * q.dim + c];
    }
    return dot / std::sqrt(norm);
}

/// Checks `got` against the reference for every query (see the file comment). `candidates`,
/// when given, restricts each query to its own rows.
void expect_conforms(const TopK& got, const VectorView& corpus, const SearchQueries& q, std::size_t k, float tol,
                     const RowLists* candidates = nullptr) {
    ASSERT_EQ(got.n_queries, q.n_queries);
    ASSERT_EQ(got.k, k);
    for (std::size_t i = 0; i < q.n_queries; ++i) {
        const std::size_t begin = q.scope.row_begin.empty() ? 0 : q.scope.row_begin[i];
        const std::size_t limit = q.scope.row_limit.empty() ? corpus.n_rows : std::min(q.scope.row_limit[i], corpus.n_rows);
        std::vector<std::int64_t> excluded = excluded_of(q, i);
        if (q.scope.first_self_row >= 0) excluded.push_back(q.scope.first_self_row + static_cast<std::int64_t>(i));
        for (std::size_t row = 0; row < std::min(begin, corpus.n_rows); ++row)
            excluded.push_back(static_cast<std::int64_t>(row));
        if (const RowFilter* filter = q.scope.filter(i))  // rows outside the filter are as if excluded
            for (std::size_t row = 0; row < corpus.n_rows; ++row)
                if (!filter->allows(static_cast<std::int64_t>(row))) excluded.push_back(static_cast<std::int64_t>(row));
        std::vector<std::int64_t> only;
        if (candidates) only.assign(candidates->begin(i), candidates->begin(i) + candidates->size(i));
        const auto want = test::reference_topk(corpus, q.vectors + i * q.dim, limit, excluded, k,
                                               candidates ? &only : nullptr);
        ASSERT_EQ(got.count[i], want.size()) << "query " << i;
        std::set<std::int64_t> seen;
        for (std::size_t r = 0; r < want.size(); ++r) {
            EXPECT_NEAR(got.sim(i, r), want[r].sim, tol) << "query " << i << " rank " << r;
            const std::int64_t row = got.row(i, r);
            ASSERT_GE(row, static_cast<std::int64_t>(begin)) << "query " << i << " rank " << r;
            ASSERT_LT(row, static_cast<std::int64_t>(limit)) << "query " << i << " rank " << r;
            EXPECT_EQ(std::find(excluded.begin(), excluded.end(), row), excluded.end()) << "excluded row " << row;
            EXPECT_TRUE(seen.insert(row).second) << "row " << row << " twice for query " << i;
            if (candidates) EXPECT_NE(std::find(only.begin(), only.end(), row), only.end()) << "not a candidate";
            EXPECT_NEAR(got.sim(i, r), exact_sim(corpus, q, i, row), tol) << "query " << i << " row " << row;
        }
        for (std::size_t r = want.size(); r < k; ++r) EXPECT_EQ(got.row(i, r), -1);
    }
}

TEST_P(SearchConformance, RandomShapesAndTilings) {
    // Dimensions from 1 to 1024 (not multiples of 8 too), k from 1 to more than the rows.
    struct Shape {
        std::size_t n_corpus, n_queries, dim, k;
    };
    for (const Shape& s : {Shape{300, 20, 1, 5}, Shape{500, 33, 7, 10}, Shape{2000, 40, 384, 100},
                           Shape{1500, 17, 1024, 64}, Shape{40, 5, 384, 100}, Shape{3000, 300, 16, 1}}) {
        const auto corpus_values = test::random_unit_rows(s.n_corpus, s.dim, 11 + s.dim);
        const auto query_values = test::random_unit_rows(s.n_queries, s.dim, 97 + s.dim);
        const VectorView corpus = VectorView::of(corpus_values, s.dim);
        const SearchQueries queries = make_queries(query_values, s.dim);
        auto index = backend()->build(corpus);
        for (const SearchTuning tuning : {SearchTuning{}, SearchTuning{7, 13, 1}, SearchTuning{64, 100, 2}}) {
            index->tuning = tuning;
            SCOPED_TRACE("N=" + std::to_string(s.n_corpus) + " dim=" + std::to_string(s.dim) + " k=" +
                         std::to_string(s.k) + " tiles " + std::to_string(tuning.query_tile) + "x" +
                         std::to_string(tuning.corpus_tile));
            expect_conforms(index->search(queries, s.k), corpus, queries, s.k, tolerance());
        }
    }
}

TEST_P(SearchConformance, PlainSearchAcrossTileBoundaries) {
    const std::size_t n = 3000, dim = 37, k = 40;
    const auto corpus_values = test::random_unit_rows(n, dim, 1);
    const auto query_values = test::random_unit_rows(57, dim, 2);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    const SearchQueries queries = make_queries(query_values, dim);
    auto index = backend()->build(corpus);
    expect_conforms(index->search(queries, k), corpus, queries, k, tolerance());
    index->tuning.query_tile = 5;  // the same index with tiles that do not divide the shapes
    index->tuning.corpus_tile = 97;
    expect_conforms(index->search(queries, k), corpus, queries, k, tolerance());
}

TEST_P(SearchConformance, CutoffsExclusionsAndRowRanges) {
    const std::size_t n = 2000, dim = 24, n_queries = 40, k = 25;
    const auto corpus_values = test::random_unit_rows(n, dim, 3);
    const auto query_values = test::random_unit_rows(n_queries, dim, 4);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    SearchQueries queries = make_queries(query_values, dim);
    for (std::size_t i = 0; i < n_queries; ++i) {
        // Limits from 0 (nothing searchable) through tile edges to past the corpus; begins
        // from 0 to past the limit (nothing searchable either).
        const std::size_t limits[] = {0, 1, 24, 25, 97, 1000, 1999, 2000, 5000};
        queries.scope.row_limit.push_back(limits[i % 9]);
        queries.scope.row_begin.push_back(i % 4 == 0 ? 0 : (i * 37) % 1500);
        std::vector<std::int64_t> excluded;
        for (std::size_t e = 0; e < i % 5; ++e) excluded.push_back(static_cast<std::int64_t>((i * 131 + e * 17) % n));
        queries.scope.excluded.add(excluded);
    }
    auto index = backend()->build(corpus);
    index->tuning.query_tile = 7;
    index->tuning.corpus_tile = 256;
    expect_conforms(index->search(queries, k), corpus, queries, k, tolerance());
}

TEST_P(SearchConformance, SelfRowsAreLeftOutOfTheirOwnResults) {
    // Corpus rows 300 .. 360 as queries (first_self_row = 300), with cutoffs, exclusions and a
    // filter beside self-exclusion, in tiles smaller than the block: each query conforms without
    // its own row, and equals the same search with its row given as an exclusion instead.
    const std::size_t n = 1500, dim = 16, n_queries = 60, first = 300, k = 20;
    const auto corpus_values = test::random_unit_rows(n, dim, 41);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    const std::vector<float> rows(corpus_values.begin() + first * dim, corpus_values.begin() + (first + n_queries) * dim);
    SearchQueries by_scope = make_queries(rows, dim);
    by_scope.scope.first_self_row = static_cast<std::int64_t>(first);
    auto odd_rows_out = std::make_shared<RowFilter>(RowFilter::none(n));
    for (std::size_t r = 0; r < n; ++r)
        if (r % 7 != 3) odd_rows_out->allow(r);
    by_scope.scope.filters = {odd_rows_out};
    SearchQueries by_list = by_scope;
    by_list.scope.first_self_row = -1;
    for (std::size_t i = 0; i < n_queries; ++i) {
        by_scope.scope.row_limit.push_back(i % 3 == 0 ? n : first + 20 + i * 3);  // some end before the query's row
        std::vector<std::int64_t> excluded;
        if (i % 4 == 1) excluded.push_back(static_cast<std::int64_t>((first + i + 1) % n));
        by_scope.scope.excluded.add(excluded);
        excluded.push_back(static_cast<std::int64_t>(first + i));
        by_list.scope.excluded.add(excluded);
    }
    by_list.scope.row_limit = by_scope.scope.row_limit;
    auto index = backend()->build(corpus);
    index->tuning.query_tile = 8;
    index->tuning.corpus_tile = 128;
    const TopK got = index->search(by_scope, k);
    expect_conforms(got, corpus, by_scope, k, tolerance());
    const TopK want = index->search(by_list, k);
    EXPECT_EQ(got.rows, want.rows);
    EXPECT_EQ(got.sims, want.sims);
    RowLists everything;
    for (std::size_t i = 0; i < n_queries; ++i) {
        std::vector<std::int64_t> all(n);
        for (std::size_t r = 0; r < n; ++r) all[r] = static_cast<std::int64_t>(r);
        everything.add(all);
    }
    const TopK candidates = index->search_candidates(by_scope, everything, k);
    expect_conforms(candidates, corpus, by_scope, k, tolerance(), &everything);
    for (std::size_t i = 0; i < n_queries; ++i)
        for (std::size_t r = 0; r < candidates.count[i]; ++r)
            EXPECT_NE(candidates.row(i, r), static_cast<std::int64_t>(first + i)) << "query " << i;
}

TEST_P(SearchConformance, KAtOneAnd2048AndMoreThanTheRows) {
    const std::size_t n = 2500, dim = 16;
    const auto corpus_values = test::random_unit_rows(n, dim, 5);
    const auto query_values = test::random_unit_rows(9, dim, 6);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    const SearchQueries queries = make_queries(query_values, dim);
    auto index = backend()->build(corpus);
    for (const std::size_t k : {std::size_t{1}, std::size_t{2048}})
        expect_conforms(index->search(queries, k), corpus, queries, k, tolerance());
    const VectorView small{corpus_values.data(), DType::f32, 300, dim};
    expect_conforms(backend()->build(small)->search(queries, 2048), small, queries, 2048, tolerance());
}

TEST_P(SearchConformance, ExactTiesKeepEqualSimilarities) {
    // Every corpus row appears four times: the k-th place falls inside groups of equal rows.
    const std::size_t distinct = 150, dim = 12, k = 30;
    const auto base = test::random_unit_rows(distinct, dim, 7);
    std::vector<float> corpus_values;
    for (int copy = 0; copy < 4; ++copy) corpus_values.insert(corpus_values.end(), base.begin(), base.end());
    const auto query_values = test::random_unit_rows(20, dim, 8);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    const SearchQueries queries = make_queries(query_values, dim);
    expect_conforms(backend()->build(corpus)->search(queries, k), corpus, queries, k, tolerance());
}

TEST_P(SearchConformance, StreamedCorpusGivesTheSameResult) {
    // 24 MiB of device memory: the work buffers take most of it, so a CUDA index streams the
    // corpus in chunks; the CPU index reads it in place as always.
    const std::size_t n = 30000, dim = 128, n_queries = 64, k = 50;
    const auto corpus_values = test::random_unit_rows(n, dim, 9);
    const auto query_values = test::random_unit_rows(n_queries, dim, 10);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    SearchQueries queries = make_queries(query_values, dim);
    for (std::size_t i = 0; i < n_queries; ++i) {
        queries.scope.row_limit.push_back(i % 2 ? n : 12345);
        queries.scope.row_begin.push_back(i % 3 ? 0 : 4000);
    }
    auto streamed = backend(std::size_t{24} << 20);
    streamed->tuning.query_tile = 16;
    streamed->tuning.corpus_tile = 2048;
    expect_conforms(streamed->build(corpus)->search(queries, k), corpus, queries, k, tolerance());
}

TEST_P(SearchConformance, SelfJoinDensities) {
    const std::size_t n = 1200, dim = 20, prefix = 1000, q = 10, k_stored = 13;
    const auto corpus_values = test::random_unit_rows(n, dim, 11);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    auto index = backend()->build(corpus);
    index->tuning.query_tile = 64;
    index->tuning.corpus_tile = 300;
    const SelfJoin small = index->self_join(8, q, k_stored);  // 7 other rows: fewer than q
    for (std::size_t row = 0; row < 8; ++row) {
        EXPECT_TRUE(std::isnan(small.density[row])) << "row " << row;
        EXPECT_EQ(small.rows[row * k_stored + 7], -1);
    }
    const SelfJoin join = index->self_join(prefix, q, k_stored);
    ASSERT_EQ(join.n_rows, prefix);
    ASSERT_EQ(join.k_stored, k_stored);
    EXPECT_EQ(join.computed_by, index->label());
    for (std::size_t row = 0; row < prefix; ++row) {
        const auto want = test::reference_topk(corpus, corpus_values.data() + row * dim, prefix,
                                               {static_cast<std::int64_t>(row)}, k_stored);
        double density = 0;
        for (std::size_t r = 0; r < q; ++r) density += 1.0 - want[r].sim;
        EXPECT_NEAR(join.density[row], density / q, tolerance()) << "row " << row;
        for (std::size_t r = 0; r < k_stored; ++r) {
            EXPECT_NEAR(join.sims[row * k_stored + r], want[r].sim, tolerance()) << "row " << row << " rank " << r;
            EXPECT_NE(join.rows[row * k_stored + r], static_cast<std::int64_t>(row));
            EXPECT_LT(join.rows[row * k_stored + r], static_cast<std::int64_t>(prefix));
        }
    }
}

TEST_P(SearchConformance, CandidatesWithinRangesAndExclusions) {
    const std::size_t n = 4000, dim = 33, n_queries = 30, k = 8;
    const auto corpus_values = test::random_unit_rows(n, dim, 12);
    const auto query_values = test::random_unit_rows(n_queries, dim, 13);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    SearchQueries queries = make_queries(query_values, dim);
    RowLists candidates;
    for (std::size_t i = 0; i < n_queries; ++i) {
        std::vector<std::int64_t> rows;
        for (std::size_t c = 0; c < (i * 7) % 40; ++c) rows.push_back(static_cast<std::int64_t>((i * 977 + c * 131) % n));
        if (!rows.empty()) rows.push_back(rows.front());  // a duplicate counts once
        candidates.add(rows);
        queries.scope.row_limit.push_back(i % 3 ? n : 2500);
        queries.scope.row_begin.push_back(i % 4 ? 0 : 500);
        queries.scope.excluded.add(rows.size() > 2 ? std::vector<std::int64_t>{rows[1]} : std::vector<std::int64_t>{});
    }
    expect_conforms(backend()->build(corpus)->search_candidates(queries, candidates, k), corpus, queries, k,
                    tolerance(), &candidates);
}

/// A filter over n rows allowing those with row % modulus == residue.
std::shared_ptr<const RowFilter> every_nth(std::size_t n, std::size_t modulus, std::size_t residue) {
    auto filter = std::make_shared<RowFilter>(RowFilter::none(n));
    for (std::size_t row = residue; row < n; row += modulus) filter->allow(row);
    return filter;
}

TEST_P(SearchConformance, RowFiltersWithRangesExclusionsAndCandidates) {
    const std::size_t n = 3000, dim = 20, n_queries = 24, k = 30;
    const auto corpus_values = test::random_unit_rows(n, dim, 21);
    const auto query_values = test::random_unit_rows(n_queries, dim, 22);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    // Filters sparse and dense, one allowing nothing, one past a 64-row word edge only.
    const std::vector<std::shared_ptr<const RowFilter>> kinds = {
        every_nth(n, 3, 1), every_nth(n, 97, 5), std::make_shared<RowFilter>(RowFilter::none(n)), every_nth(n, 1, 0),
        nullptr, every_nth(n, 2999, 64)};
    SearchQueries queries = make_queries(query_values, dim);
    RowLists candidates;
    for (std::size_t i = 0; i < n_queries; ++i) {
        queries.scope.filters.push_back(kinds[i % kinds.size()]);
        queries.scope.row_limit.push_back(i % 4 == 3 ? 1500 : n);
        queries.scope.row_begin.push_back(i % 5 == 4 ? 300 : 0);
        queries.scope.excluded.add({static_cast<std::int64_t>((i * 211) % n), 1, 4});
        std::vector<std::int64_t> rows;
        for (std::size_t c = 0; c < 60; ++c) rows.push_back(static_cast<std::int64_t>((i * 389 + c * 53) % n));
        candidates.add(rows);
    }
    auto index = backend()->build(corpus);
    index->tuning.query_tile = 5;
    index->tuning.corpus_tile = 200;
    expect_conforms(index->search(queries, k), corpus, queries, k, tolerance());
    expect_conforms(index->search_candidates(queries, candidates, k), corpus, queries, k, tolerance(), &candidates);
    // One filter for every query.
    SearchQueries shared = make_queries(query_values, dim);
    shared.scope.filters = {every_nth(n, 7, 2)};
    expect_conforms(index->search(shared, k), corpus, shared, k, tolerance());
    // A filter of another size, or a count that is neither one nor one per query, is refused.
    shared.scope.filters = {every_nth(n + 1, 7, 2)};
    EXPECT_THROW(index->search(shared, k), UsageError);
    shared.scope.filters = {kinds[0], kinds[1]};
    EXPECT_THROW(index->search(shared, k), UsageError);
}

/// Per query, `band` rows at similarities 0.9 + t * 1e-4 (t = 0 .. band - 1) to the query:
/// several of them share each float16 value (spacing 4.9e-4 there), so a 16-bit tile cannot tell
/// them apart and only the margin and the exact re-scoring pick the right ones. The rest of the
/// corpus is random; all rows are shuffled across the corpus tiles and rounded to float16.
std::vector<std::uint16_t> near_tie_corpus(const std::vector<float>& queries, std::size_t n_queries, std::size_t dim,
                                           std::size_t band, std::size_t n_random) {
    std::vector<float> rows = test::random_unit_rows(n_queries * band + n_random, dim, 23);
    for (std::size_t i = 0; i < n_queries; ++i) {
        const float* q = queries.data() + i * dim;
        for (std::size_t t = 0; t < band; ++t) {
            float* r = rows.data() + (i * band + t) * dim;
            double along = 0, norm = 0;
            for (std::size_t c = 0; c < dim; ++c) along += double(r[c]) * q[c];
            for (std::size_t c = 0; c < dim; ++c) norm += (r[c] - along * q[c]) * (r[c] - along * q[c]);
            const double sim = 0.9 + 1e-4 * static_cast<double>(t), across = std::sqrt(1 - sim * sim);
            for (std::size_t c = 0; c < dim; ++c)
                r[c] = static_cast<float>(sim * q[c] + across * (r[c] - along * q[c]) / std::sqrt(norm));
        }
    }
    std::vector<std::size_t> order(n_queries * band + n_random);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = (i * 7919) % order.size();  // 7919 is prime
    std::vector<std::uint16_t> out(order.size() * dim);
    for (std::size_t i = 0; i < order.size(); ++i)
        for (std::size_t c = 0; c < dim; ++c) out[i * dim + c] = float_to_half(rows[order[i] * dim + c]);
    return out;
}

TEST_P(SearchConformance, NearTiesAtTheMarginOnAFloat16Corpus) {
    const std::size_t dim = 64, n_queries = 8, band = 240, n_random = 3000;
    const auto query_values = test::random_unit_rows(n_queries, dim, 24);
    const auto corpus_half = near_tie_corpus(query_values, n_queries, dim, band, n_random);
    const VectorView corpus{corpus_half.data(), DType::f16, n_queries * band + n_random, dim};
    const SearchQueries queries = make_queries(query_values, dim);
    auto index = backend()->build(corpus);
    index->tuning.query_tile = 3;
    index->tuning.corpus_tile = 256;
    for (const std::size_t k : {std::size_t{100}, std::size_t{2048}}) {
        SCOPED_TRACE("k=" + std::to_string(k));
        const TopK got = index->search(queries, k);
        expect_conforms(got, corpus, queries, k, tolerance());
        if (exact_gap() == 0) continue;
        for (std::size_t i = 0; i < n_queries; ++i) {
            const auto want = test::reference_topk(corpus, query_values.data() + i * dim, corpus.n_rows, {}, k);
            for (std::size_t r = 0; r < k; ++r) {
                const bool apart = (r == 0 || want[r - 1].sim - want[r].sim > exact_gap()) &&
                                   (r + 1 == k || want[r].sim - want[r + 1].sim > exact_gap());
                if (apart) EXPECT_EQ(got.row(i, r), want[r].row) << "query " << i << " rank " << r;
            }
        }
    }
}

TEST_P(SearchConformance, BadArgumentsAreRefused) {
    const std::size_t n = 50, dim = 8;
    const auto corpus_values = test::random_unit_rows(n, dim, 14);
    const auto query_values = test::random_unit_rows(2, dim, 15);
    auto index = backend()->build(VectorView::of(corpus_values, dim));
    SearchQueries queries = make_queries(query_values, dim);
    EXPECT_THROW(index->search(queries, 0), UsageError);
    EXPECT_THROW(index->search(queries, SearchIndex::max_k + 1), UsageError);
    queries.scope.row_begin = {1};  // one entry for two queries
    EXPECT_THROW(index->search(queries, 3), UsageError);
    EXPECT_THROW(backend()->build(VectorView{corpus_values.data(), DType::f32, 0, dim}), UsageError);
}

INSTANTIATE_TEST_SUITE_P(Backends, SearchConformance,
                         ::testing::Values(BackendCase{"cpu", 1e-5f, 2e-6f}, BackendCase{"cpu-bf16", 1e-5f, 2e-6f},
                                           BackendCase{"cpu-bf16-sgemm", 1e-5f, 2e-6f},
                                           BackendCase{"cpu-int8", 1e-5f, 2e-6f},
                                           BackendCase{"cpu-int8-sgemm", 1e-5f, 2e-6f},
                                           BackendCase{"cuda-f32", 1e-5f, 2e-6f},
                                           BackendCase{"cuda-f16", 4e-3f}, BackendCase{"cuda-bf16", 3e-2f},
                                           BackendCase{"cuda-f16-t16", 4e-3f, 2e-6f}, BackendCase{"emu-f32", 1e-5f, 2e-6f},
                                           BackendCase{"emu-f16", 4e-3f}, BackendCase{"emu-bf16", 3e-2f},
                                           BackendCase{"emu-f16-t16", 4e-3f, 2e-6f}),
                         case_name);

}  // namespace
}  // namespace novelty
