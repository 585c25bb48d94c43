// The tile loop the CPU indexes share (float32 rows through sgemm, bf16 and int8 copies through
// their kernels): queries in blocks, each block against one corpus tile of similarities at a time, every
// query's row of the tile offered to its collector behind a vectorised threshold filter, and the
// query's scope (ScopeRules: row range, exclusions, row filter, self-exclusion) applied to what
// passes. Internal to the CPU backend.
#pragma once

#include "novelty/search/search.hpp"
#include "search/exact_rescore.hpp"
#include "search/cpu/scan_at_least.hpp"
#include "search/cpu/screening.hpp"
#include "search/scope_rules.hpp"
#include "search/search_rules.hpp"
#include "util/parallel_for.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

inline constexpr std::size_t default_query_tile = 512;
inline constexpr std::size_t default_corpus_tile = 2048;
inline constexpr std::size_t tile_scan_chunk = 256;

/// One top-k problem: queries (a VectorView, f32 or f16) against corpus rows, each query with
/// the rows its scope allows.
struct TopKProblem {
    VectorView corpus;
    VectorView queries;
    std::size_t k = 0;
    ScopeRules scope;
    SearchTuning tuning;

    std::size_t query_tile() const { return tuning.query_tile ? tuning.query_tile : default_query_tile; }
    std::size_t corpus_tile() const { return tuning.corpus_tile ? tuning.corpus_tile : default_corpus_tile; }
};

/// The problem of a search call on `corpus` (queries already normalised, float32).
TopKProblem search_problem(const VectorView& corpus, const SearchQueries& queries, std::size_t k,
                           const SearchTuning& tuning);
/// The problem of a self-join of rows [0, n_rows) of `corpus`: each row against the others (a
/// scope whose queries are rows 0, 1, ...).
TopKProblem self_join_problem(const VectorView& corpus, std::size_t n_rows, std::size_t k_stored,
                              const SearchTuning& tuning);

/// One worker's block of queries: their float32 copy (n x dim), their row ranges, and the rows
/// the block spans together ([block_begin, block_limit); empty when no query has a row).
struct QueryBlock {
    std::size_t first = 0;  // the block's first query
    std::size_t n = 0;
    std::vector<float> vectors;
    std::vector<std::size_t> begin, limit;  // per query
    std::size_t block_begin = 0, block_limit = 0;

    QueryBlock(const TopKProblem& problem, std::size_t q0, std::size_t n_block);
    /// Whether query i has searchable rows in corpus rows [c0, c0 + n_tile).
    bool meets_tile(std::size_t i, std::size_t c0, std::size_t n_tile) const {
        return begin[i] < std::min(limit[i], c0 + n_tile) && limit[i] > c0;
    }
};

/// Offers query i's similarities to corpus rows [c0, c0 + n_tile) (row_sims) to `collector`
/// (threshold() and push(sim, row)): chunks of the row pass the threshold filter; the threshold
/// is refreshed after each chunk, and a stale one only lets through rows the collector then
/// drops. Rows equal to the threshold pass, and the collector settles the tie by row.
template <class Collector>
void offer_tile_row(const TopKProblem& problem, const QueryBlock& block, std::size_t i, Collector& collector,
                    const float* row_sims, std::size_t c0, std::size_t n_tile, std::uint32_t* above) {
    const std::size_t lo = block.begin[i] > c0 ? block.begin[i] - c0 : 0;
    const std::size_t hi = columns_below_limit(block.limit[i], c0, n_tile);
    const std::size_t query = block.first + i;
    for (std::size_t j0 = lo; j0 < hi; j0 += tile_scan_chunk) {
        const std::size_t n_scan = std::min(tile_scan_chunk, hi - j0);
        const std::size_t n_above = scan_at_least(row_sims + j0, n_scan, collector.threshold(), above);
        for (std::size_t a = 0; a < n_above; ++a) {
            const std::size_t j = j0 + above[a];
            const auto row = static_cast<std::int64_t>(c0 + j);
            if (problem.scope.keeps(query, row)) collector.push(row_sims[j], row);
        }
    }
}

/// Runs one block of queries over the corpus tiles its row ranges span: `tile_product(c0,
/// n_tile, sims)` fills sims[block.n x n_tile] (row stride n_tile) with the block's similarities
/// to rows [c0, c0 + n_tile); c0 starts at block_begin rounded down to a multiple of `align`
/// (the bf16 index's panels of 16 rows) and advances by the corpus tile. collectors[i] is
/// query i's.
template <class Collector, class TileProduct>
void search_block(const TopKProblem& problem, const QueryBlock& block, Collector* collectors, std::size_t align,
                  TileProduct&& tile_product) {
    const std::size_t corpus_tile = problem.corpus_tile();
    std::vector<float> sims(block.n * corpus_tile);
    std::vector<std::uint32_t> above(tile_scan_chunk);
    for (std::size_t c0 = block.block_begin / align * align; c0 < block.block_limit; c0 += corpus_tile) {
        const std::size_t n_tile = std::min(corpus_tile, block.block_limit - c0);
        tile_product(c0, n_tile, sims.data());
        for (std::size_t i = 0; i < block.n; ++i)
            if (block.meets_tile(i, c0, n_tile))
                offer_tile_row(problem, block, i, collectors[i], sims.data() + i * n_tile, c0, n_tile, above.data());
    }
}

/// The exact top k of every query of `problem`: query blocks on worker threads (OpenBLAS must be
/// single-threaded when the products call it), each block's screened products by
/// make_product(block) (a callable (c0, n_tile, sims) for search_block, aligned to `align`),
/// collected within the screening margin for `operands` against `rows` (the maxima of the corpus
/// rows' ScreenNorms), and every query's candidates re-scored with exact_dot.
template <class MakeProduct>
TopK screened_topk(const TopKProblem& problem, const ScreenNorms& rows, ScreenOperands operands, std::size_t align,
                   MakeProduct&& make_product, const ProgressFn& progress) {
    const std::size_t n_queries = problem.queries.n_rows;
    const std::size_t k = problem.k, dim = problem.corpus.dim;
    const std::size_t query_tile = problem.query_tile();
    TopK result = empty_top_k(n_queries, k);
    const std::size_t n_blocks = (n_queries + query_tile - 1) / query_tile;
    parallel_for_blocks(
        n_blocks, problem.tuning.threads,
        [&](std::size_t b) {
            const std::size_t q0 = b * query_tile;
            QueryBlock block(problem, q0, std::min(query_tile, n_queries - q0));
            std::vector<ScoredRow> storage(block.n * 2 * k);
            std::vector<ScreenedCollector> collectors;
            collectors.reserve(block.n);
            for (std::size_t i = 0; i < block.n; ++i) {
                const ScreenNorms query = screen_norms(block.vectors.data() + i * dim, dim, operands);
                collectors.emplace_back(storage.data() + i * 2 * k, k, 2 * screen_margin(dim, query, rows));
            }
            search_block(problem, block, collectors.data(), align, make_product(block));
            for (std::size_t i = 0; i < block.n; ++i) {
                std::vector<ScoredRow>& kept = collectors[i].finish();
                result.count[q0 + i] =
                    rescore_best(block.vectors.data() + i * dim, problem.corpus, kept.data(), kept.size(), k,
                                 result.rows.data() + (q0 + i) * k, result.sims.data() + (q0 + i) * k);
            }
        },
        progress);
    return result;
}

}  // namespace novelty
