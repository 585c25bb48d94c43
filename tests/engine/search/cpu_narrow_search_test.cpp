// The CPU index with bf16 or int8 storage must equal the float32 CPU index bit for bit: the same
// rows, the same similarity bits, the same order and ties, the same self-join densities, on both
// screening paths of each (vdpbf16ps where the CPU has AVX512-BF16 and the int8 kernel of the CPU
// path, novelty/util/cpu_path.hpp; sgemm on widened rows), and under each CPU path forced. The conformance suite checks them against the reference like
// every backend; this file checks the equality, on the cases that would break a screening margin
// that is too small: near-ties below bf16's and int8's resolution around the k-th place at k = 100
// and k = 2048, exact duplicates, float16 corpora, row ranges, exclusions and filters, and the
// screening bounds themselves.
#include "novelty/search/backends.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"
#include "search/cpu/screening.hpp"
#include "search/exact_rescore.hpp"
#include "search_reference.hpp"
#include "util/bf16_gemm.hpp"
#include "util/int8_gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace novelty;
using novelty::test::make_queries;
using novelty::test::random_unit_rows;

namespace {

std::unique_ptr<SearchBackend> narrow_backend(CpuStorage storage, bool instructions) {
    CpuBackendOptions options;
    options.storage = storage;
    options.screen_instructions = instructions;
    return make_cpu_backend(options);
}

std::string label_of(CpuStorage storage) { return std::string("cpu-") + cpu_storage_name(storage); }

std::uint32_t bits_of(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

void expect_same_topk(const TopK& want, const TopK& got, const std::string& label) {
    ASSERT_EQ(got.n_queries, want.n_queries) << label;
    ASSERT_EQ(got.k, want.k) << label;
    ASSERT_EQ(got.count, want.count) << label;
    std::size_t differences = 0;
    for (std::size_t i = 0; i < want.n_queries && differences < 10; ++i)
        for (std::size_t r = 0; r < want.k; ++r)
            if (got.row(i, r) != want.row(i, r) || bits_of(got.sim(i, r)) != bits_of(want.sim(i, r))) {
                ADD_FAILURE() << label << ": query " << i << " rank " << r << ": row " << got.row(i, r) << " sim "
                              << got.sim(i, r) << ", the f32 index has row " << want.row(i, r) << " sim "
                              << want.sim(i, r);
                ++differences;
                break;
            }
}

// Every search of `queries` on the f32 index and both paths of `storage`, compared.
void expect_narrow_equals_f32(CpuStorage storage, const VectorView& corpus, const SearchQueries& queries,
                              std::size_t k, const std::string& label, const SearchTuning& tuning = {}) {
    auto f32 = make_cpu_backend();
    f32->tuning = tuning;
    const TopK want = f32->build(corpus)->search(queries, k);
    for (bool instructions : {true, false}) {
        auto backend = narrow_backend(storage, instructions);
        backend->tuning = tuning;
        auto index = backend->build(corpus);
        EXPECT_EQ(index->label(), label_of(storage));
        expect_same_topk(want, index->search(queries, k),
                         label + " " + label_of(storage) + (instructions ? " (kernel)" : " (sgemm)"));
    }
}

// n rows that all lie within ~2^-9 (below bf16's resolution, and int8's) of one direction, so
// their exact similarities to a query near that direction are apart by less than the screening
// error and their screened order is not their exact order; every 7th row repeats the one before.
std::vector<float> near_tie_rows(std::size_t n, std::size_t dim, std::uint32_t seed) {
    std::vector<float> base = random_unit_rows(1, dim, seed);
    std::vector<float> noise = random_unit_rows(n, dim, seed + 1);
    std::vector<float> rows(n * dim);
    for (std::size_t r = 0; r < n; ++r) {
        double norm = 0;
        for (std::size_t c = 0; c < dim; ++c) {
            rows[r * dim + c] = r % 7 == 6 ? rows[(r - 1) * dim + c] : base[c] + 0.004f * noise[r * dim + c];
            norm += double(rows[r * dim + c]) * rows[r * dim + c];
        }
        if (r % 7 == 6) continue;
        for (std::size_t c = 0; c < dim; ++c) rows[r * dim + c] = static_cast<float>(rows[r * dim + c] / std::sqrt(norm));
    }
    return rows;
}

class CpuNarrowSearch : public ::testing::TestWithParam<CpuStorage> {};

TEST_P(CpuNarrowSearch, RandomCorporaEqualTheFloat32Index) {
    for (std::size_t dim : {1u, 7u, 384u, 1024u}) {
        const std::size_t n = dim == 1024 ? 2500 : 3000;
        const auto corpus_values = random_unit_rows(n, dim, 5 + dim);
        const auto query_values = random_unit_rows(40, dim, 50 + dim);
        const VectorView corpus = VectorView::of(corpus_values, dim);
        for (std::size_t k : {1u, 10u, 100u})
            expect_narrow_equals_f32(GetParam(), corpus, make_queries(query_values, dim), k,
                                   "dim " + std::to_string(dim) + " k " + std::to_string(k));
    }
}

TEST_P(CpuNarrowSearch, NearTiesAtTheKthPlaceAreSettledAsFloat32Does) {
    const std::size_t dim = 384;
    for (std::size_t k : {100u, 2048u}) {
        const std::size_t n = k == 100 ? 1500 : 5000;
        const auto corpus_values = near_tie_rows(n, dim, 70 + static_cast<std::uint32_t>(k));
        // Queries: rows of the cluster (a near-tie at every rank) and random directions.
        std::vector<float> query_values(corpus_values.begin(), corpus_values.begin() + 12 * dim);
        const auto far = random_unit_rows(4, dim, 3);
        query_values.insert(query_values.end(), far.begin(), far.end());
        SearchTuning small_tiles;
        small_tiles.corpus_tile = 300;  // not a whole number of panels: the index rounds it up
        small_tiles.query_tile = 5;
        expect_narrow_equals_f32(GetParam(), VectorView::of(corpus_values, dim), make_queries(query_values, dim), k,
                               "near ties k " + std::to_string(k), small_tiles);
    }
}

TEST_P(CpuNarrowSearch, Float16CorporaRangesExclusionsAndFiltersEqualTheFloat32Index) {
    const std::size_t n = 2000, dim = 96;
    const auto values = near_tie_rows(n, dim, 9);
    std::vector<std::uint16_t> halves(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) halves[i] = float_to_half(values[i]);
    const VectorView corpus{halves.data(), DType::f16, n, dim};
    std::vector<float> query_values(values.begin(), values.begin() + 6 * dim);
    SearchQueries queries = make_queries(query_values, dim);
    queries.scope.row_begin = {0, 17, 100, 1999, 0, 5};
    queries.scope.row_limit = {2000, 1500, 101, 2000, 1, 1993};
    std::vector<std::vector<std::int64_t>> excluded(6);
    for (std::int64_t row = 0; row < 600; row += 3) excluded[0].push_back(row);
    excluded[5] = {5, 6, 7, 8};
    for (const auto& rows : excluded) queries.scope.excluded.add(rows);
    expect_narrow_equals_f32(GetParam(), corpus, queries, 100, "float16 rows with ranges and exclusions");
    auto filter = std::make_shared<RowFilter>(RowFilter::none(n));
    for (std::size_t row = 0; row < n; row += 2) filter->allow(row);
    queries.scope.filters = {filter};
    expect_narrow_equals_f32(GetParam(), corpus, queries, 100, "float16 rows with ranges, exclusions and a filter");
}

TEST_P(CpuNarrowSearch, SelfJoinDensitiesAreBitIdentical) {
    const std::size_t n = 1200, dim = 64, q = 10, k_stored = 16;
    const auto values = near_tie_rows(n, dim, 21);
    const VectorView corpus = VectorView::of(values, dim);
    auto f32 = make_cpu_backend();
    const SelfJoin want = f32->build(corpus)->self_join(n - 7, q, k_stored);  // the symmetric join
    f32->tuning.self_join_memory = 1;                                      // the block-by-block join
    const SelfJoin blocks = f32->build(corpus)->self_join(n - 7, q, k_stored);
    ASSERT_EQ(blocks.rows, want.rows);
    for (const auto& [instructions, budget] : {std::pair{true, 0}, {true, 1}, {false, 0}, {false, 1}}) {
        auto backend = narrow_backend(GetParam(), instructions);
        backend->tuning.self_join_memory = budget;  // 0: the symmetric join; 1: block by block
        backend->tuning.query_tile = 100;           // not a whole number of panels: rounded up
        const SelfJoin got = backend->build(corpus)->self_join(n - 7, q, k_stored);
        EXPECT_EQ(got.computed_by, label_of(GetParam()));
        ASSERT_EQ(got.rows, want.rows);
        ASSERT_EQ(got.sims.size(), want.sims.size());
        ASSERT_EQ(got.density.size(), want.density.size());
        for (std::size_t i = 0; i < want.sims.size(); ++i) ASSERT_EQ(bits_of(got.sims[i]), bits_of(want.sims[i])) << i;
        for (std::size_t i = 0; i < want.density.size(); ++i)
            ASSERT_EQ(bits_of(got.density[i]), bits_of(want.density[i])) << "density of row " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Storages, CpuNarrowSearch, ::testing::Values(CpuStorage::bf16, CpuStorage::int8),
                         [](const ::testing::TestParamInfo<CpuStorage>& info) {
                             return std::string(cpu_storage_name(info.param));
                         });

// The int8 screen's kernel of each CPU path (AMX tiles, AVX512-VNNI, AVX-VNNI, AVX2; skipped past
// this CPU's best) and bf16's (AVX512-BF16 on the avx512 and amx paths, sgemm below them), forced
// one by one: search (query blocks of whole AMX tiles and past them) and the self-join, both
// ways, equal the float32 index bit for bit.
class CpuNarrowSearchPath : public ::testing::TestWithParam<CpuPath> {};

TEST_P(CpuNarrowSearchPath, SearchAndSelfJoinEqualTheFloat32Index) {
    const CpuPath best = best_cpu_path(cpu_features());
    if (GetParam() > best) GTEST_SKIP() << "this CPU's best path is " << cpu_path_name(best);
    const ScopedCpuPath path(GetParam());
    const std::size_t n = 1500, dim = 200, k_stored = 16;
    const auto values = near_tie_rows(n, dim, 31);
    std::vector<float> query_values(values.begin(), values.begin() + 37 * dim);
    const auto far = random_unit_rows(10, dim, 32);
    query_values.insert(query_values.end(), far.begin(), far.end());
    const VectorView corpus = VectorView::of(values, dim);
    const std::string label = std::string("path ") + cpu_path_name(GetParam());
    for (CpuStorage storage : {CpuStorage::int8, CpuStorage::bf16}) {
        expect_narrow_equals_f32(storage, corpus, make_queries(query_values, dim), 50, label);
        const SelfJoin want = make_cpu_backend()->build(corpus)->self_join(n, 10, k_stored);
        for (std::size_t budget : {0u, 1u}) {
            auto backend = narrow_backend(storage, true);
            backend->tuning.self_join_memory = budget;
            const SelfJoin got = backend->build(corpus)->self_join(n, 10, k_stored);
            ASSERT_EQ(got.rows, want.rows) << label;
            for (std::size_t i = 0; i < want.sims.size(); ++i)
                ASSERT_EQ(bits_of(got.sims[i]), bits_of(want.sims[i])) << label << " " << i;
            for (std::size_t i = 0; i < want.density.size(); ++i)
                ASSERT_EQ(bits_of(got.density[i]), bits_of(want.density[i])) << label << " density " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(EveryCpuPath, CpuNarrowSearchPath,
                         ::testing::Values(CpuPath::amx, CpuPath::avx512, CpuPath::avxvnni, CpuPath::avx2, CpuPath::f32),
                         [](const ::testing::TestParamInfo<CpuPath>& info) { return std::string(cpu_path_name(info.param)); });

// The bound holds on the vectors that come closest to it: coordinates chosen so that every
// product rounds the same way in bf16, and it is not loose enough to keep most of a corpus.
TEST(CpuBf16Search, ScreeningMarginBoundsTheScreenedError) {
    const std::size_t dim = 384;
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> uniform(0.5f, 1.0f);
    double worst_ratio = 0;
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<float> a(dim), b(dim);
        for (std::size_t c = 0; c < dim; ++c) {
            // Just below a bf16 rounding boundary, so both operands round up by almost u.
            a[c] = from_bf16(to_bf16(uniform(rng))) * (1 + 0.9f * std::ldexp(1.0f, -9));
            b[c] = trial % 2 ? a[c] : from_bf16(to_bf16(uniform(rng))) * (1 + 0.9f * std::ldexp(1.0f, -9));
        }
        float screened = 0;
        for (std::size_t c = 0; c < dim; ++c) screened += round_to_bf16(a[c]) * round_to_bf16(b[c]);
        const double error = std::fabs(double(exact_dot(a.data(), b.data(), dim)) - screened);
        const double margin = screen_margin(dim, screen_norms(a.data(), dim, ScreenOperands::bf16),
                                            screen_norms(b.data(), dim, ScreenOperands::bf16));
        ASSERT_LE(error, margin) << "trial " << trial;
        worst_ratio = std::max(worst_ratio, error / margin);
    }
    EXPECT_GT(worst_ratio, 0.2);  // the worst case comes within a small factor of the bound
    // For unit rows the bound is near 2 |x - bf16(x)|: about 0.004 at 384 values, under half the
    // worst case 2 u = 0.0078.
    const auto unit = random_unit_rows(1, dim, 8);
    const ScreenNorms norms = screen_norms(unit.data(), dim, ScreenOperands::bf16);
    EXPECT_LT(screen_margin(dim, norms, norms), 0.0045);
    const ScreenNorms f32 = screen_norms(unit.data(), dim, ScreenOperands::f32);
    EXPECT_EQ(f32.residual, 0.0);
    EXPECT_LT(screen_margin(dim, f32, f32), 5e-5);
    EXPECT_EQ(float_at_most(0.1), std::nextafter(0.1f, 0.0f));  // 0.1f is above 0.1
    EXPECT_EQ(float_at_most(0.5), 0.5f);
}

// The int8 bound holds where the quantization errors add up instead of cancelling: every value
// just below a rounding midpoint (so each rounds down by almost half a step) and the two vectors
// equal, for both of the int8 index's screened forms (the exact integer sum times the scales, as
// vpdpbusd's path; float32 products of the dequantized values, as the sgemm path).
TEST(CpuInt8Search, ScreeningMarginBoundsTheScreenedError) {
    std::mt19937 rng(6);
    std::uniform_int_distribution<int> step(20, 125);
    double worst_ratio = 0;
    for (std::size_t dim : {1u, 2u, 3u, 384u}) {
        for (int trial = 0; trial < 100; ++trial) {
            std::vector<float> a(dim), b(dim);
            for (std::size_t c = 0; c < dim; ++c) {
                a[c] = c == 0 ? 1.0f : (static_cast<float>(step(rng)) + 0.499f) / 127.0f;
                b[c] = trial % 2 ? a[c] : (static_cast<float>(step(rng)) - 0.499f) / 127.0f;
            }
            std::vector<std::int8_t> qa(dim), qb(dim);
            const float sa = quantize_int8_values(a.data(), dim, qa.data());
            const float sb = quantize_int8_values(b.data(), dim, qb.data());
            std::int32_t sum = 0;
            float dequantized = 0;
            for (std::size_t c = 0; c < dim; ++c) {
                sum += qa[c] * qb[c];
                dequantized += (sa * static_cast<float>(qa[c])) * (sb * static_cast<float>(qb[c]));
            }
            const float integer = std::fma(static_cast<float>(sum), sa * sb, 0.0f);
            const double exact = exact_dot(a.data(), b.data(), dim);
            const double margin = screen_margin(dim, screen_norms(a.data(), dim, ScreenOperands::int8),
                                                screen_norms(b.data(), dim, ScreenOperands::int8));
            ASSERT_LE(std::fabs(exact - integer), margin) << "dim " << dim << " trial " << trial;
            ASSERT_LE(std::fabs(exact - dequantized), margin) << "dim " << dim << " trial " << trial;
            if (dim == 384) worst_ratio = std::max(worst_ratio, std::fabs(exact - integer) / margin);
        }
    }
    EXPECT_GT(worst_ratio, 0.4);  // the bound is not far above what these vectors reach
    // For real unit rows the margin is about 2 |x - x'|, several times bf16's.
    const auto unit = random_unit_rows(1, 384, 8);
    const ScreenNorms norms = screen_norms(unit.data(), 384, ScreenOperands::int8);
    EXPECT_EQ(norms.extra_roundings, 3u);
    EXPECT_GT(norms.residual, 0.0);
    EXPECT_LT(screen_margin(384, norms, norms), 0.03);
}

TEST(CpuInt8Search, RefusesRowsItCannotHoldAndNamesThem) {
    std::vector<float> values = random_unit_rows(5, 8, 3);
    values[3 * 8 + 2] = std::numeric_limits<float>::quiet_NaN();
    try {
        narrow_backend(CpuStorage::int8, true)->build(VectorView::of(values, 8));
        ADD_FAILURE() << "a row holding NaN was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("corpus row 3"), std::string::npos) << e.what();
    }
    const std::size_t wide = 65537;
    std::vector<float> one(wide, 0.0f);
    one[0] = 1.0f;
    EXPECT_THROW(narrow_backend(CpuStorage::int8, true)->build(VectorView::of(one, wide)), UsageError);
}

TEST(CpuStorage, NamesAreChecked) {
    EXPECT_EQ(parse_cpu_storage("bf16"), CpuStorage::bf16);
    EXPECT_EQ(parse_cpu_storage("float32"), CpuStorage::f32);
    EXPECT_EQ(parse_cpu_storage("int8"), CpuStorage::int8);
    EXPECT_THROW(parse_cpu_storage("f16"), UsageError);
    EXPECT_THROW(parse_cpu_storage("int4"), UsageError);
    EXPECT_EQ(narrow_backend(CpuStorage::bf16, true)->label(), "cpu-bf16");
    EXPECT_EQ(narrow_backend(CpuStorage::int8, true)->label(), "cpu-int8");
    EXPECT_EQ(make_cpu_backend()->label(), "cpu");
}

}  // namespace
