// The batched search behind densities on demand: the lists a batch of ideas lacks, each corpus
// row searched once up to its largest missing prefix, in segments between its prefixes, and the
// lists of the smaller prefixes taken on the way (docs/scoring.md, "Densities on demand").
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace novelty {

/// A neighbour whose density no stored list serves: idea `idea`'s neighbour `row` at its cutoff.
struct PendingDensity {
    std::size_t slot, idea, row, limit;
};

/// What the batched search found for the pending neighbours.
struct ComputedDensities {
    std::map<std::size_t, DensityLists> lists;  ///< by k: the lists to store
    /// (row, limit) -> (k of its list, its place among lists[k])
    std::map<std::pair<std::size_t, std::size_t>, std::pair<std::size_t, std::size_t>> list_of;
    /// Per pending neighbour whose idea excludes more rows than a list of max_k can spare: the
    /// similarities of its search with those exclusions (need of them, or fewer when the prefix
    /// less the exclusions holds fewer); absent for the others.
    std::map<std::size_t, std::vector<float>> with_exclusions;
    std::size_t queries = 0;       ///< rows searched (segments and exclusion searches)
    std::uint64_t row_pairs = 0;   ///< query-row pairs in their ranges: sum over queries of limit - begin
};

/// Neighbours a list at one prefix must keep so that an idea's exclusions (`excluded_below` of
/// them in the prefix) still leave q: k, doubled until it is enough (a few sizes, so the store
/// keeps few kinds of segment); 0 when even max_k is not.
std::size_t list_size_for(std::size_t k, std::size_t q, std::size_t excluded_below);

/// One search for every pending neighbour: for each (row, limit) a list long enough for every
/// idea that needs it (stored for later runs), and for a neighbour whose idea excludes more rows
/// than a list of max_k can spare, a search with those exclusions (not stored). A row missing
/// lists at limits c1 < c2 < ... is searched over [0, c1), [c1, c2), ... and its list at c_j is
/// the best of the lists below it merged (similarity descending, ties by lower row: the very list
/// a search of [0, c_j) gives, since each pair's similarity does not depend on the range).
/// `excluded[i]`: idea i's excluded rows, sorted. Progress: rows searched, of the total.
ComputedDensities search_pending(const Corpus& corpus, SearchIndex& index, const ScoreOptions& options, std::size_t k,
                                 const std::vector<PendingDensity>& pending,
                                 const std::vector<std::vector<std::int64_t>>& excluded);

}  // namespace novelty
