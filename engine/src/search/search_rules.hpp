// The rules every search backend applies, written once (which rows a query may see is the
// scope's, search/scope_rules.hpp): how partial results merge into a final top-k (similarity
// descending, ties by lower row), how a self-join row's density is reduced, and how a device
// search splits its work into tiles. The CPU backend and the CUDA
// backend's host side both call these; tests/engine/search/search_rules_test.cpp checks them on the CPU.
#pragma once

#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

/// How many of the n_cols columns of a tile starting at corpus row first_col lie below the
/// row limit `limit` (0 when the tile starts at or past it).
std::size_t columns_below_limit(std::size_t limit, std::size_t first_col, std::size_t n_cols);

/// An n_queries x k result with nothing found yet: rows -1, similarities -inf, counts 0.
TopK empty_top_k(std::size_t n_queries, std::size_t k);

/// The merge rule: from n (sim, row) pairs (rows >= 0; a pair with row < 0 or sim = -inf is an
/// empty slot and ignored), writes the best k to out_rows / out_sims, similarity descending,
/// equal similarities by lower row, then -1 / -inf padding. Returns how many are real.
std::size_t best_of(const float* sims, const std::int64_t* rows, std::size_t n, std::size_t k,
                    std::int64_t* out_rows, float* out_sims);

/// Fills join.density from join.sims: per row, the mean of 1 - sim over its first q neighbours
/// (summed in double), or NaN when counts[row] < q.
void fill_densities(SelfJoin& join, const std::vector<std::size_t>& counts);

/// Slots a device search keeps per query for the entries of one tile that pass the threshold
/// filter (at or above the query's running k-th best): max(1024, 2k).
std::size_t filter_capacity(std::size_t k);

/// The self-join of rows [0, n_rows) from their top-k search (query i = row i, itself left
/// out, k = k_stored): the rows and similarities move over, the densities are filled.
SelfJoin self_join_from(TopK&& top, std::size_t n_rows, std::size_t q);

/// How a device search splits its work: queries in batches (each batch's running candidates
/// stay on the device), each batch in query tiles, the corpus in tiles; one similarity tile
/// of query_tile x corpus_tile float32 values exists at a time.
struct DeviceTilePlan {
    std::size_t query_tile = 0;
    std::size_t corpus_tile = 0;
    std::size_t query_batch = 0;  ///< a multiple of query_tile, or all queries
};

/// Tiles for n_queries against n_rows corpus rows with top-k: the largest tiles (at most
/// 4096 x 65536) whose similarity tile fits in sims_bytes, clamped to the problem; query
/// batches whose running candidates (n x (k + filter_capacity(k)) x 12 bytes) fit in
/// candidate_bytes. Nonzero
/// tuning.query_tile / corpus_tile override the sizes (tests cross tile boundaries with
/// small ones). Every size is at least 1; corpus_tile is at least min(k, n_rows) so that a
/// full tile can hold k results.
DeviceTilePlan plan_device_tiles(std::size_t n_queries, std::size_t n_rows, std::size_t k, std::size_t sims_bytes,
                                 std::size_t candidate_bytes, const SearchTuning& tuning);

}  // namespace novelty
