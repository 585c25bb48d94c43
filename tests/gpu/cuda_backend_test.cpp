// What is particular to the CUDA backend, beyond the conformance suite every backend passes
// (tests/engine/search/search_conformance_test.cpp, compiled into both the CPU test binary of a
// CUDA build and this one, which is what bench/device_check.sh runs on the card): float16 recall against the CPU backend, a streamed 16-bit corpus re-scored like
// a resident one, one corpus upload per index, the threshold filter's overflow, memory budgets,
// the phase profile, 16-bit similarity tiles and device errors. Every suite skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"
#include "search_reference.hpp"

namespace novelty {
namespace {

class CudaBackend : public ::testing::Test {
protected:
    void SetUp() override {
        if (list_devices().empty()) GTEST_SKIP() << "no CUDA device";
    }
};

std::unique_ptr<SearchBackend> cuda_backend(DeviceStorage storage, std::size_t budget = 0) {
    CudaBackendOptions options;
    options.storage = storage;
    options.memory_budget = budget;
    return make_cuda_backend(options);
}

std::vector<std::uint16_t> to_half(const std::vector<float>& values) {
    std::vector<std::uint16_t> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = float_to_half(values[i]);
    return out;
}

using test::make_queries;

/// Rows must match exactly where the reference's similarities are separated by more than
/// `gap`; similarities must match within `tol` rank by rank.
void expect_same_topk(const TopK& got, const TopK& want, float tol) {
    ASSERT_EQ(got.n_queries, want.n_queries);
    ASSERT_EQ(got.k, want.k);
    for (std::size_t i = 0; i < want.n_queries; ++i) {
        ASSERT_EQ(got.count[i], want.count[i]) << "query " << i;
        for (std::size_t r = 0; r < want.k; ++r) {
            if (r >= want.count[i]) {  // padding
                EXPECT_EQ(got.row(i, r), -1);
                EXPECT_EQ(got.sim(i, r), -std::numeric_limits<float>::infinity());
                continue;
            }
            EXPECT_NEAR(got.sim(i, r), want.sim(i, r), tol) << "query " << i << " rank " << r;
            const bool tied = (r > 0 && want.sim(i, r - 1) - want.sim(i, r) < 1e-5f) ||
                              (r + 1 < want.count[i] && want.sim(i, r) - want.sim(i, r + 1) < 1e-5f);
            if (!tied) EXPECT_EQ(got.row(i, r), want.row(i, r)) << "query " << i << " rank " << r;
        }
    }
}

/// Share of the reference's neighbours that the result also has.
double recall(const TopK& got, const TopK& want) {
    std::size_t found = 0, total = 0;
    for (std::size_t i = 0; i < want.n_queries; ++i) {
        std::set<std::int64_t> rows(got.rows.begin() + i * got.k, got.rows.begin() + i * got.k + got.count[i]);
        for (std::size_t r = 0; r < want.count[i]; ++r) found += rows.count(want.row(i, r));
        total += want.count[i];
    }
    return total == 0 ? 1.0 : double(found) / double(total);
}

TEST_F(CudaBackend, Float16RecallAndSimilarities) {
    const std::size_t n = 20000, dim = 384, n_queries = 200, k = 100;
    const auto corpus_half = to_half(test::random_unit_rows(n, dim, 3));
    const auto query_values = test::random_unit_rows(n_queries, dim, 4);
    const VectorView corpus{corpus_half.data(), DType::f16, n, dim};
    const SearchQueries queries = make_queries(query_values, dim);
    const TopK want = make_cpu_backend()->build(corpus)->search(queries, k);
    for (auto storage : {DeviceStorage::f16, DeviceStorage::bf16}) {
        const TopK got = cuda_backend(storage)->build(corpus)->search(queries, k);
        const double r = recall(got, want);
        if (storage == DeviceStorage::f16) EXPECT_GE(r, 0.999);
        else EXPECT_GE(r, 0.95) << "bfloat16 rounds queries to 8 bits of mantissa";
        const float tol = storage == DeviceStorage::f16 ? 2e-3f : 1e-2f;
        for (std::size_t i = 0; i < n_queries; ++i)
            for (std::size_t rank = 0; rank < k; ++rank) ASSERT_NEAR(got.sim(i, rank), want.sim(i, rank), tol);
        // The reported similarities are re-scored with the float32 query against the stored rows.
        // In float16 storage those are the corpus's own values, so a row both found has the CPU's
        // similarity up to summation order; bfloat16 storage rounds the rows themselves.
        if (storage != DeviceStorage::f16) continue;
        for (std::size_t i = 0; i < n_queries; ++i)
            for (std::size_t rank = 0; rank < k; ++rank)
                for (std::size_t other = 0; other < k; ++other)
                    if (got.row(i, rank) == want.row(i, other))
                        ASSERT_NEAR(got.sim(i, rank), want.sim(i, other), 2e-6f) << "query " << i;
    }
}

TEST_F(CudaBackend, StreamedFloat16CorpusIsRescoredLikeTheResidentOne) {
    // In float16 storage the queries are rounded for the GEMMs; the final k must come back with
    // the float32 queries' similarities whether the corpus is resident (re-scored on the device)
    // or streamed (re-scored on the host).
    const std::size_t n = 100000, dim = 128, n_queries = 64, k = 50;  // 25.6 MB in float16
    const auto corpus_half = to_half(test::random_unit_rows(n, dim, 33));
    const auto query_values = test::random_unit_rows(n_queries, dim, 34);
    const VectorView corpus{corpus_half.data(), DType::f16, n, dim};
    SearchQueries queries = make_queries(query_values, dim);
    for (std::size_t i = 0; i < n_queries; ++i) queries.scope.row_limit.push_back(i % 2 ? n : 12345);
    const TopK want = make_cpu_backend()->build(corpus)->search(queries, k);
    const TopK resident = cuda_backend(DeviceStorage::f16)->build(corpus)->search(queries, k);
    // A 24 MiB budget cannot hold the corpus: it is streamed (the profile line says so).
    const std::string profile = ::testing::TempDir() + "novelty_streamed_profile.jsonl";
    std::remove(profile.c_str());
    ::setenv("NOVELTY_CUDA_PROFILE", profile.c_str(), 1);
    auto streamed_backend = cuda_backend(DeviceStorage::f16, std::size_t{24} << 20);
    streamed_backend->tuning.query_tile = 16;
    streamed_backend->tuning.corpus_tile = 2048;
    // The index reads NOVELTY_CUDA_PROFILE when it is built (its device context), not the backend.
    auto streamed_index = streamed_backend->build(corpus);
    ::unsetenv("NOVELTY_CUDA_PROFILE");
    const TopK streamed = streamed_index->search(queries, k);
    std::ifstream in(profile);
    std::string line;
    std::getline(in, line);
    EXPECT_NE(line.find("\"resident\": false"), std::string::npos) << line;
    EXPECT_NE(line.find("\"rescore_on_host\": "), std::string::npos) << line;
    EXPECT_NE(line.find("\"chunk_upload\": "), std::string::npos) << line;
    std::remove(profile.c_str());
    // Recall >= 0.999 is Float16RecallAndSimilarities' check; here only a sanity bound, since
    // 64 queries at 128-d leave too few neighbours for a tighter one to be meaningful.
    EXPECT_GE(recall(streamed, want), 0.99);
    for (const TopK* got : {&resident, &streamed})
        for (std::size_t i = 0; i < n_queries; ++i)
            for (std::size_t rank = 0; rank < got->count[i]; ++rank)
                for (std::size_t other = 0; other < want.count[i]; ++other)
                    if (got->row(i, rank) == want.row(i, other))
                        ASSERT_NEAR(got->sim(i, rank), want.sim(i, other), 2e-6f)
                            << (got == &resident ? "resident" : "streamed") << " query " << i;
}

TEST_F(CudaBackend, IndexUploadsItsCorpusOnce) {
    // An index keeps its device copy for every later call: the profile of the first call counts
    // one corpus upload, later calls none (the CPU side of this check is in
    // tests/search_index_test.cpp).
    const std::size_t n = 1500, dim = 24, k = 5;
    const auto values = test::random_unit_rows(n, dim, 18);
    const auto query_values = test::random_unit_rows(4, dim, 19);
    const SearchQueries queries = make_queries(query_values, dim);
    const std::string path = ::testing::TempDir() + "novelty_cuda_uploads.jsonl";
    std::remove(path.c_str());
    ::setenv("NOVELTY_CUDA_PROFILE", path.c_str(), 1);
    auto index = cuda_backend(DeviceStorage::f32)->build(VectorView::of(values, dim));
    ::unsetenv("NOVELTY_CUDA_PROFILE");
    const TopK want = make_cpu_backend()->build(VectorView::of(values, dim))->search(queries, k);
    for (int call = 0; call < 3; ++call) expect_same_topk(index->search(queries, k), want, 1e-5f);
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 3u) << "one line per call";
    EXPECT_NE(lines[0].find("\"corpus_uploads\": 1"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[1].find("corpus_uploads"), std::string::npos) << lines[1];
    EXPECT_EQ(lines[2].find("corpus_uploads"), std::string::npos) << lines[2];
    std::remove(path.c_str());
}

TEST_F(CudaBackend, StreamedChunksKeepTheLowerRowOfEveryTie) {
    // A float32 corpus streamed in chunks of a few thousand rows whose second half repeats its
    // first (every row has an exact twin in a later chunk), searched with row limits that end
    // inside chunks and with k cutting through tied pairs: the running best merged chunk by chunk
    // must keep the lower row of every tie, as the CPU backend does. On the emulated device the
    // similarities are the CPU's bits, so rows must match exactly; on a card a tile's float32
    // products may differ in the last bit between twins, so rows are compared where apart.
    const std::size_t half = 40000, n = 2 * half, dim = 64, n_queries = 40;  // 20 MB: streamed
    auto values = test::random_unit_rows(half, dim, 41);
    values.insert(values.end(), values.begin(), values.end());
    const auto query_values = test::random_unit_rows(n_queries, dim, 42);
    const VectorView corpus = VectorView::of(values, dim);
    SearchQueries queries = make_queries(query_values, dim);
    for (std::size_t i = 0; i < n_queries; ++i) queries.scope.row_limit.push_back(i % 3 ? n : half + 777 * i);
    const std::string profile = ::testing::TempDir() + "novelty_streamed_ties_profile.jsonl";
    std::remove(profile.c_str());
    ::setenv("NOVELTY_CUDA_PROFILE", profile.c_str(), 1);
    auto streamed = cuda_backend(DeviceStorage::f32, std::size_t{12} << 20);
    streamed->tuning.query_tile = 8;
    streamed->tuning.corpus_tile = 1000;
    auto cpu = make_cpu_backend()->build(corpus);
    auto index = streamed->build(corpus);
    ::unsetenv("NOVELTY_CUDA_PROFILE");
    for (const std::size_t k : {std::size_t{7}, std::size_t{30}}) {
        SCOPED_TRACE("k=" + std::to_string(k));
        const TopK got = index->search(queries, k), want = cpu->search(queries, k);
        if (!dev::emulation_forced()) {
            expect_same_topk(got, want, 1e-5f);
            continue;
        }
        EXPECT_EQ(got.rows, want.rows);
        EXPECT_EQ(got.sims, want.sims);
    }
    std::ifstream in(profile);
    std::string line;
    std::getline(in, line);
    EXPECT_NE(line.find("\"resident\": false"), std::string::npos) << line;
    std::remove(profile.c_str());
}

TEST_F(CudaBackend, ThresholdFilterOverflowStaysExact) {
    // The first corpus tile is far from the query; the second holds 1,500 rows closer than
    // anything in the first, more than the filter's 1,024 slots: the batch must be redone
    // with full selections and still give the exact neighbours.
    const std::size_t dim = 32, tile = 2000, k = 10;
    auto values = test::random_unit_rows(2 * tile, dim, 21);
    std::vector<float> query(dim, 0.0f);
    query[0] = 1.0f;
    for (std::size_t r = 0; r < 2 * tile; ++r) {
        float* row = values.data() + r * dim;
        const bool close = r >= tile && r < tile + 1500;
        row[0] = close ? 5.0f + 0.001f * static_cast<float>(r % 97) : 0.0f;
        double norm = 0;
        for (std::size_t c = 0; c < dim; ++c) norm += double(row[c]) * row[c];
        for (std::size_t c = 0; c < dim; ++c) row[c] = static_cast<float>(row[c] / std::sqrt(norm));
    }
    const VectorView corpus = VectorView::of(values, dim);
    const SearchQueries queries = make_queries(query, dim);
    auto gpu = cuda_backend(DeviceStorage::f32);
    gpu->tuning.corpus_tile = tile;
    expect_same_topk(gpu->build(corpus)->search(queries, k), make_cpu_backend()->build(corpus)->search(queries, k), 1e-5f);
}

TEST_F(CudaBackend, BudgetTooSmallToStreamSaysWhatToGive) {
    const auto values = test::random_unit_rows(20000, 256, 22);  // 20 MB in float32
    const auto query_values = test::random_unit_rows(2, 256, 23);
    std::string message;
    try {
        cuda_backend(DeviceStorage::f32, std::size_t{1} << 20)
            ->build(VectorView::of(values, 256))->search(make_queries(query_values, 256), 10);
        FAIL() << "a 1 MiB budget cannot hold the work buffers and two chunks";
    } catch (const UsageError& e) {
        message = e.what();
        EXPECT_EQ(e.parameter(), "device_memory");  // the CLI names it --device-memory
    }
    // The advice is a number of MiB that works.
    const std::string flag = "a budget of ";
    const auto at = message.find(flag);
    ASSERT_NE(at, std::string::npos) << message;
    const std::size_t advised = std::stoul(message.substr(at + flag.size()));
    const TopK top = cuda_backend(DeviceStorage::f32, advised << 20)
                         ->build(VectorView::of(values, 256))->search(make_queries(query_values, 256), 10);
    EXPECT_EQ(top.count[0], 10u);
}

TEST_F(CudaBackend, ProfileCountsEveryTileAndKeepsTheResult) {
    const std::size_t n = 3000, dim = 100, n_queries = 57, k = 40;
    const auto corpus_values = test::random_unit_rows(n, dim, 31);
    const auto query_values = test::random_unit_rows(n_queries, dim, 32);
    const VectorView corpus = VectorView::of(corpus_values, dim);
    const SearchQueries queries = make_queries(query_values, dim);
    const std::string path = ::testing::TempDir() + "novelty_cuda_profile.jsonl";
    std::remove(path.c_str());
    ::setenv("NOVELTY_CUDA_PROFILE", path.c_str(), 1);
    auto gpu = cuda_backend(DeviceStorage::f32);
    gpu->tuning.query_tile = 5;
    gpu->tuning.corpus_tile = 97;
    auto index = gpu->build(corpus);
    ::unsetenv("NOVELTY_CUDA_PROFILE");
    expect_same_topk(index->search(queries, k), make_cpu_backend()->build(corpus)->search(queries, k), 1e-5f);
    std::ifstream in(path);
    std::string line, last;
    std::size_t lines = 0;
    while (std::getline(in, line)) last = line, ++lines;
    ASSERT_EQ(lines, 1u) << "one line per call";
    // 12 query tiles x 31 corpus tiles; each tile one GEMM and one merge; the first corpus tile
    // of each query tile a full selection, the other 30 the filter.
    for (const char* expected : {"\"tiles\": 372", "\"gemm\": 372", "\"merge\": 372", "\"select_full\": 12",
                                 "\"filter\": 360", "\"full_selections\": 12", "\"resident\": true", "\"call\": "})
        EXPECT_NE(last.find(expected), std::string::npos) << expected << " not in " << last;
    std::remove(path.c_str());
}

/// The last line of a profile file ("" when none).
std::string last_profile_line(const std::string& path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    return last;
}

std::unique_ptr<SearchBackend> half_tile_backend(std::size_t query_tile, std::size_t corpus_tile) {
    CudaBackendOptions options;
    options.storage = DeviceStorage::f16;
    options.similarity_tile = DeviceStorage::f16;
    auto backend = make_cuda_backend(options);
    backend->tuning.query_tile = query_tile;
    backend->tuning.corpus_tile = corpus_tile;
    return backend;
}

TEST_F(CudaBackend, HalfTilesGiveTheCpuTopKOnAFloat16Corpus) {
    // 16-bit similarity tiles (docs/cuda.md): every entry within the margin of the running k-th
    // best is re-scored with the float32 query, so the rows are the CPU's on the same float16
    // rows wherever their similarities are apart, and the similarities the CPU's up to
    // summation order. The profile must show the float16 tiles in use.
    const std::size_t n = 20000, dim = 384, n_queries = 100;
    const auto corpus_half = to_half(test::random_unit_rows(n, dim, 41));
    const auto query_values = test::random_unit_rows(n_queries, dim, 42);
    const VectorView corpus{corpus_half.data(), DType::f16, n, dim};
    const SearchQueries queries = make_queries(query_values, dim);
    const std::string path = ::testing::TempDir() + "novelty_half_tile_profile.jsonl";
    std::remove(path.c_str());
    ::setenv("NOVELTY_CUDA_PROFILE", path.c_str(), 1);
    auto index = half_tile_backend(32, 2048)->build(corpus);
    ::unsetenv("NOVELTY_CUDA_PROFILE");
    auto cpu = make_cpu_backend()->build(corpus);
    for (const std::size_t k : {std::size_t{1}, std::size_t{100}, std::size_t{2048}})
        expect_same_topk(index->search(queries, k), cpu->search(queries, k), 2e-6f);
    const std::string line = last_profile_line(path);
    for (const char* expected : {"\"half_tiles\": ", "\"half_tile_calls\": 1", "\"resident\": true"})
        EXPECT_NE(line.find(expected), std::string::npos) << expected << " not in " << line;
    EXPECT_EQ(line.find("overflow_redos"), std::string::npos) << line;
    // The filter re-scored every kept entry: the final re-scoring is not repeated.
    EXPECT_EQ(line.find("\"rescore\""), std::string::npos) << line;
    std::remove(path.c_str());
}

TEST_F(CudaBackend, HalfTilesSelfJoinMatchesTheCpu) {
    const std::size_t n = 6000, dim = 256, q = 10;
    const auto corpus_half = to_half(test::random_unit_rows(n, dim, 43));
    const VectorView corpus{corpus_half.data(), DType::f16, n, dim};
    const SelfJoin got = half_tile_backend(64, 1024)->build(corpus)->self_join(n, q, q);
    const SelfJoin want = make_cpu_backend()->build(corpus)->self_join(n, q, q);
    for (std::size_t row = 0; row < n; ++row) {
        ASSERT_NEAR(got.density[row], want.density[row], 1e-6f) << "row " << row;
        for (std::size_t r = 0; r < q; ++r) ASSERT_NEAR(got.sims[row * q + r], want.sims[row * q + r], 2e-6f);
    }
}

TEST_F(CudaBackend, HalfTilesOverflowStaysExact) {
    // As ThresholdFilterOverflowStaysExact, with 16-bit tiles: the second tile overflows the
    // slots and the batch is redone with float32 tiles and full selections.
    const std::size_t dim = 32, tile = 2000, k = 10;
    auto values = test::random_unit_rows(2 * tile, dim, 44);
    for (std::size_t r = tile; r < tile + 1500; ++r) {
        float* row = values.data() + r * dim;
        row[0] = 5.0f + 0.01f * static_cast<float>(r % 97);
        double norm = 0;
        for (std::size_t c = 0; c < dim; ++c) norm += double(row[c]) * row[c];
        for (std::size_t c = 0; c < dim; ++c) row[c] = static_cast<float>(row[c] / std::sqrt(norm));
    }
    const auto corpus_half = to_half(values);
    const VectorView corpus{corpus_half.data(), DType::f16, 2 * tile, dim};
    std::vector<float> query(dim, 0.0f);
    query[0] = 1.0f;
    const SearchQueries queries = make_queries(query, dim);
    expect_same_topk(half_tile_backend(0, tile)->build(corpus)->search(queries, k),
                     make_cpu_backend()->build(corpus)->search(queries, k), 2e-6f);
}

TEST_F(CudaBackend, TileKnobIsChecked) {
    const auto values = test::random_unit_rows(100, 16, 45);
    const VectorView corpus = VectorView::of(values, 16);
    ::setenv("NOVELTY_CUDA_TILE", "bf16", 1);
    EXPECT_THROW(cuda_backend(DeviceStorage::f16)->build(corpus), UsageError);
    ::setenv("NOVELTY_CUDA_TILE", "half", 1);
    EXPECT_THROW(cuda_backend(DeviceStorage::f16)->build(corpus), UsageError);
    ::unsetenv("NOVELTY_CUDA_TILE");
    CudaBackendOptions options;
    options.similarity_tile = DeviceStorage::bf16;
    EXPECT_THROW(make_cuda_backend(options)->build(corpus), UsageError);
    // f32 storage asks for 16-bit tiles in vain (cuBLAS writes float16 only from float16
    // inputs): the float32 path runs and the result is exact.
    options.storage = DeviceStorage::f32;
    options.similarity_tile = DeviceStorage::f16;
    const auto query_values = test::random_unit_rows(3, 16, 46);
    const SearchQueries queries = make_queries(query_values, 16);
    expect_same_topk(make_cuda_backend(options)->build(corpus)->search(queries, 7),
                     make_cpu_backend()->build(corpus)->search(queries, 7), 1e-5f);
}

TEST_F(CudaBackend, BadDeviceIndexIsRefused) {
    CudaBackendOptions options;
    options.device = 999;
    EXPECT_THROW(make_cuda_backend(options), UsageError);
}

}  // namespace
}  // namespace novelty
