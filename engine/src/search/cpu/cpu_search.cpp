// The CPU backend: exact cosine top-k over tiles. Each worker takes a block of queries, computes
// the block's similarities to one corpus tile at a time with OpenBLAS sgemm, and feeds them to
// one bounded heap per query behind a threshold filter. Memory is one tile of similarities per
// worker, never n_queries x N.
#include "search/cpu/cpu_self_join.hpp"
#include "search/cpu/exact_rescore.hpp"
#include "util/parallel_for.hpp"
#include "search/cpu/scan_at_least.hpp"
#include "search/search_rules.hpp"
#include "novelty/util/half.hpp"
#include "novelty/search/search.hpp"
#include "search/cpu/topk_heap.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

namespace novelty {

namespace {

constexpr std::size_t default_query_tile = 512;
constexpr std::size_t default_corpus_tile = 2048;
constexpr std::size_t scan_chunk = 256;
constexpr std::size_t default_self_join_memory = std::size_t(1) << 30;

// Rows [first, first + n) of `view` as float32: a pointer into the view when it is float32,
// otherwise converted into `buffer`.
const float* rows_as_f32(const VectorView& view, std::size_t first, std::size_t n, std::vector<float>& buffer) {
    if (view.dtype == DType::f32) return static_cast<const float*>(view.data) + first * view.dim;
    buffer.resize(n * view.dim);
    const auto* src = static_cast<const std::uint16_t*>(view.data) + first * view.dim;
    for (std::size_t i = 0; i < n * view.dim; ++i) buffer[i] = half_to_float(src[i]);
    return buffer.data();
}

// One top-k problem: queries (a VectorView, f32 or f16) against corpus rows, each query with a
// row range, an optional sorted exclusion list, and optionally its own row left out.
struct TopKProblem {
    VectorView corpus;
    VectorView queries;
    std::size_t k = 0;
    std::vector<std::size_t> row_begin;        // per query; empty = 0
    std::vector<std::size_t> row_limit;        // per query; empty = corpus.n_rows
    std::vector<std::vector<std::int64_t>> excluded;  // per query, sorted; empty = none
    const SearchQueries* filtered = nullptr;   // the queries' metadata filters; null = none
    bool exclude_self = false;                 // query i is corpus row i
    SearchTuning tuning;
};

// One worker's block of queries: their float32 copy, one collector each, their row ranges, and
// the rows the block spans together.
struct QueryBlock {
    std::size_t first = 0;  // the block's first query
    std::size_t n = 0;
    std::vector<float> vectors;             // n x dim
    std::vector<ScoredRow> storage;         // 2k slots per query
    std::vector<TopKCollector> heaps;
    std::vector<std::size_t> begin, limit;  // per query
    std::size_t block_begin = 0, block_limit = 0;

    QueryBlock(const TopKProblem& problem, std::size_t q0, std::size_t n_block) : first(q0), n(n_block) {
        const float* queries = rows_as_f32(problem.queries, q0, n_block, vectors);
        if (problem.queries.dtype == DType::f32)  // our own copy: the tile loop reuses it
            vectors.assign(queries, queries + n_block * problem.corpus.dim);
        const std::size_t kept = problem.k + rescore_margin;  // candidates for the exact re-scoring
        storage.resize(n_block * 2 * kept);
        heaps.reserve(n_block);
        begin.resize(n_block);
        limit.resize(n_block);
        block_begin = problem.corpus.n_rows;
        for (std::size_t i = 0; i < n_block; ++i) {
            heaps.emplace_back(storage.data() + i * 2 * kept, kept);
            limit[i] = searchable_rows(problem.row_limit, q0 + i, problem.corpus.n_rows);
            begin[i] = std::min(first_searchable_row(problem.row_begin, q0 + i), limit[i]);
            if (begin[i] < limit[i]) {
                block_begin = std::min(block_begin, begin[i]);
                block_limit = std::max(block_limit, limit[i]);
            }
        }
        if (block_limit == 0) block_begin = 0;
    }
};

// Offers query i's similarities to corpus rows [c0, c0 + n_tile) (row_sims) to its collector:
// chunks of the row pass the (vectorised) threshold filter; the threshold is refreshed after
// each chunk, and a stale one only lets through rows the collector then drops. Rows equal to
// the threshold pass, and the collector settles the tie by row.
void offer_tile_row(const TopKProblem& problem, QueryBlock& block, std::size_t i, const float* row_sims,
                    std::size_t c0, std::size_t n_tile, std::vector<std::uint32_t>& above) {
    const std::size_t lo = block.begin[i] > c0 ? block.begin[i] - c0 : 0;
    const std::size_t hi = columns_below_limit(block.limit[i], c0, n_tile);
    const auto* excluded = problem.excluded.empty() ? nullptr : &problem.excluded[block.first + i];
    const std::int64_t self = problem.exclude_self ? static_cast<std::int64_t>(block.first + i) : -1;
    const RowFilter* filter = problem.filtered ? problem.filtered->filter(block.first + i) : nullptr;
    TopKCollector& heap = block.heaps[i];
    for (std::size_t j0 = lo; j0 < hi; j0 += scan_chunk) {
        const std::size_t n_scan = std::min(scan_chunk, hi - j0);
        const std::size_t n_above = scan_at_least(row_sims + j0, n_scan, heap.threshold(), above.data());
        for (std::size_t a = 0; a < n_above; ++a) {
            const std::size_t j = j0 + above[a];
            const auto row = static_cast<std::int64_t>(c0 + j);
            if (row == self) continue;
            if (filter && !filter->allows(row)) continue;
            if (excluded && !excluded->empty() && std::binary_search(excluded->begin(), excluded->end(), row))
                continue;
            heap.push(row_sims[j], row);
        }
    }
}

// Searches one block of queries over the corpus tiles its row ranges span.
void search_block(const TopKProblem& problem, QueryBlock& block, std::size_t corpus_tile) {
    const std::size_t dim = problem.corpus.dim;
    std::vector<float> corpus_buffer, sims(block.n * corpus_tile);
    std::vector<std::uint32_t> above(scan_chunk);
    for (std::size_t c0 = block.block_begin; c0 < block.block_limit; c0 += corpus_tile) {
        const std::size_t n_tile = std::min(corpus_tile, block.block_limit - c0);
        const float* tile = rows_as_f32(problem.corpus, c0, n_tile, corpus_buffer);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(block.n), static_cast<int>(n_tile),
                    static_cast<int>(dim), 1.0f, block.vectors.data(), static_cast<int>(dim), tile,
                    static_cast<int>(dim), 0.0f, sims.data(), static_cast<int>(n_tile));
        for (std::size_t i = 0; i < block.n; ++i)
            if (block.begin[i] < std::min(block.limit[i], c0 + n_tile) && block.limit[i] > c0)
                offer_tile_row(problem, block, i, sims.data() + i * n_tile, c0, n_tile, above);
    }
}

TopK run_topk(const TopKProblem& problem, const ProgressFn& progress) {
    const std::size_t n_queries = problem.queries.n_rows;
    const std::size_t k = problem.k;
    const std::size_t query_tile = problem.tuning.query_tile ? problem.tuning.query_tile : default_query_tile;
    const std::size_t corpus_tile = problem.tuning.corpus_tile ? problem.tuning.corpus_tile : default_corpus_tile;

    TopK result = empty_top_k(n_queries, k);

    // Our own threads call sgemm concurrently; OpenBLAS must not start threads of its own.
    openblas_set_num_threads(1);

    const std::size_t n_blocks = (n_queries + query_tile - 1) / query_tile;
    parallel_for_blocks(
        n_blocks, problem.tuning.threads,
        [&](std::size_t b) {
            const std::size_t q0 = b * query_tile;
            QueryBlock block(problem, q0, std::min(query_tile, n_queries - q0));
            search_block(problem, block, corpus_tile);
            const std::size_t kept = k + rescore_margin;
            for (std::size_t i = 0; i < block.n; ++i) {
                const std::size_t n_found = block.heaps[i].sort_best_first();
                result.count[q0 + i] =
                    rescore_best(block.vectors.data() + i * problem.corpus.dim, problem.corpus,
                                 block.storage.data() + i * 2 * kept, n_found, k, result.rows.data() + (q0 + i) * k,
                                 result.sims.data() + (q0 + i) * k);
            }
        },
        progress);
    return result;
}

class CpuSearchIndex final : public SearchIndex {
public:
    explicit CpuSearchIndex(const VectorView& corpus) : SearchIndex(corpus) {}
    std::string name() const override { return "cpu"; }

protected:
    TopK search_impl(const SearchQueries& queries, std::size_t k) override {
        TopKProblem problem;
        problem.corpus = corpus();
        problem.queries = VectorView{queries.vectors, DType::f32, queries.n_queries, queries.dim};
        problem.k = k;
        problem.row_begin = queries.row_begin;
        problem.row_limit = queries.row_limit;
        problem.excluded = sorted_exclusions(queries);
        if (!queries.filters.empty()) problem.filtered = &queries;
        problem.tuning = tuning;
        return run_topk(problem, {});
    }

    SelfJoin self_join_impl(std::size_t n_rows, std::size_t q, std::size_t k_stored,
                            const ProgressFn& progress) override {
        // The symmetric join does half the products but keeps every row's collector in memory;
        // past a budget, search the prefix against itself block by block instead.
        const std::size_t budget = tuning.self_join_memory ? tuning.self_join_memory : default_self_join_memory;
        if (symmetric_join_bytes(n_rows, k_stored) <= budget)
            return symmetric_self_join(corpus(), n_rows, q, k_stored, tuning, progress);
        TopKProblem problem;
        problem.corpus = corpus();
        problem.corpus.n_rows = n_rows;
        problem.queries = problem.corpus;
        problem.k = k_stored;
        problem.exclude_self = true;
        problem.tuning = tuning;
        TopK top = run_topk(problem, progress);
        return self_join_from(std::move(top), n_rows, q);
    }

    TopK search_candidates_impl(const SearchQueries& queries, const RowLists& candidates, std::size_t k) override {
        const VectorView& rows_view = corpus();
        const std::size_t dim = rows_view.dim;
        const auto excluded = sorted_exclusions(queries);
        TopK result = empty_top_k(queries.n_queries, k);
        parallel_for_blocks(queries.n_queries, tuning.threads, [&](std::size_t i) {
            const std::vector<std::int64_t> rows =
                candidate_rows(candidates, i, first_searchable_row(queries.row_begin, i),
                               searchable_rows(queries.row_limit, i, rows_view.n_rows),
                               excluded.empty() ? nullptr : &excluded[i], queries.filter(i));
            std::vector<ScoredRow> storage(2 * k);
            TopKCollector heap(storage.data(), k);
            std::vector<float> buffer;
            const float* query = queries.vectors + i * dim;
            for (std::int64_t row : rows)
                heap.push(exact_dot(query, row_as_f32(rows_view, static_cast<std::size_t>(row), buffer), dim), row);
            result.count[i] = heap.write_best_first(result.rows.data() + i * k, result.sims.data() + i * k);
        });
        return result;
    }
};

class CpuSearchBackend final : public SearchBackend {
public:
    std::string name() const override { return "cpu"; }

protected:
    std::unique_ptr<SearchIndex> build_impl(const VectorView& corpus) const override {
        return std::make_unique<CpuSearchIndex>(corpus);
    }
};

}  // namespace

std::unique_ptr<SearchBackend> make_cpu_backend() { return std::make_unique<CpuSearchBackend>(); }

}  // namespace novelty
