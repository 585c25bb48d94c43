// Which corpus rows a rank holds and how global row ranges, exclusions, candidates and results
// map to its shard. Rows are strided: rank r of R holds global rows r, r + R, r + 2R, ...; its
// local row j is global row j * R + r. The map is increasing, so each shard stays in date
// order (a date cutoff is a prefix on every shard) and a tie broken by lower local row is a tie
// broken by lower global row.
#pragma once

#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

struct ShardMap {
    std::size_t n_rows = 0;   ///< rows of the whole corpus
    std::size_t n_ranks = 1;
    std::size_t rank = 0;

    /// Rows this rank holds: ceil((n_rows - rank) / n_ranks), 0 when n_rows <= rank.
    std::size_t local_rows() const { return local_below(n_rows); }
    /// How many of this rank's rows are below global row `global` (a limit or a begin).
    std::size_t local_below(std::size_t global) const;
    bool holds(std::int64_t global) const;
    std::size_t local_of(std::int64_t global) const { return static_cast<std::size_t>(global) / n_ranks; }
    std::int64_t global_of(std::size_t local) const { return static_cast<std::int64_t>(local * n_ranks + rank); }
};

/// A scope of n_queries queries (global rows) as this shard applies it, the one place a scope
/// meets the shard map: row ranges in local rows, each distinct filter converted once to the
/// shard's rows (null stays null), only the excluded rows the shard holds, in local rows, and
/// self-exclusion (query i is global row first_self_row + i) as an exclusion of that row where
/// the shard holds it (a strided shard's rows are not consecutive).
SearchScope local_scope(const SearchScope& scope, std::size_t n_queries, const ShardMap& map);

/// `queries` as this shard sees them: the same vectors (not copied) with unit_norm set, and
/// their scope as local_scope maps it.
SearchQueries local_queries(const SearchQueries& queries, const ShardMap& map);

/// Per item, the candidate rows the shard holds, in local rows.
RowLists local_candidates(const RowLists& candidates, const ShardMap& map);

/// Turns a shard's result rows (local) into global rows in place; empty slots stay -1.
void to_global_rows(std::vector<std::int64_t>& rows, const ShardMap& map);

/// One entry of a top-k list as ranks exchange it: similarity and global row (-inf / -1 empty).
struct ListEntry {
    float sim;
    std::int32_t row;
};

/// `list` (k entries, best first, empty slots last) merged with `other` (the same) into `list`:
/// the best k of both by the merge rule (similarity descending, then lower row). The lists hold
/// different rows (they come from different shards). This is the reduction operator of the
/// tree that merges the ranks' lists (top-k of a union is associative and commutative).
void merge_two_lists(ListEntry* list, const ListEntry* other, std::size_t k);

/// A TopK (global rows) as n x k list entries, and back (counts from the real entries).
std::vector<ListEntry> to_list_entries(const TopK& top);
TopK from_list_entries(const std::vector<ListEntry>& entries, std::size_t n_queries, std::size_t k);

/// Merges the per-rank top-k lists of n_queries queries: parts_rows / parts_sims hold n_parts
/// blocks of n_queries x k (global rows; -1 / -inf empty slots), one per rank. Each query's
/// result is the best k of its lists by the merge rule (best_of: similarity descending, then
/// lower row). Runs on `threads` threads (0 = all cores).
TopK merge_top_k(const std::vector<std::int64_t>& parts_rows, const std::vector<float>& parts_sims,
                 std::size_t n_parts, std::size_t n_queries, std::size_t k, std::size_t threads);

}  // namespace novelty
