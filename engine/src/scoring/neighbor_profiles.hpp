// Neighbour profiles: for each idea, its nearest papers and, for each of its p nearest, that
// paper's own nearest papers, all within the idea's cutoff and exclusions. Every RND-style score
// (any P, Q or density definition up to the sizes kept) is a function of a profile, which is how
// `novelty eval sweep` scores many variants with one search per idea (docs/scoring.md).
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

struct ProfileOptions {
    std::size_t k_idea = 100;      ///< the idea's nearest papers kept
    std::size_t p = 100;           ///< of those, the nearest whose own neighbours are kept (<= k_idea)
    std::size_t k_neighbor = 50;   ///< each such paper's own nearest kept (itself left out)
    /// Neighbours cached per paper beyond k_neighbor in the whole corpus's self-join; a paper
    /// whose list loses more than this to the idea's cutoff and exclusions is searched directly.
    std::size_t extra = 32;
    ProgressFn on_join_progress;
    CacheWarning on_cache_warning;  ///< told when the computed self-join cannot be cached
    bool write_cache = true;        ///< false: caches are read but a computed join is not stored
};

/// One idea's profile. Orders follow TopK: similarity descending, ties by lower row.
struct NeighborProfile {
    std::size_t searchable = 0;         ///< rows in the idea's prefix
    std::vector<std::int64_t> rows;     ///< the idea's k_idea nearest papers (among those its filter allows)
    std::vector<float> sims;            ///< their similarities to the idea
    /// p x k_neighbor, row-major: row r holds the similarities of rows[r]'s own k_neighbor
    /// nearest papers within the idea's prefix, less the idea's exclusions and rows[r] itself (the
    /// corpus's, not filtered: as the scorer, RND compares on the corpus's scale).
    std::vector<float> neighbor_sims;
    std::size_t k_neighbor = 0;

    const float* neighbor(std::size_t r) const { return neighbor_sims.data() + r * k_neighbor; }
};

/// How the neighbours' lists were obtained (for progress reports and tests).
struct ProfileStats {
    std::size_t from_join = 0;  ///< lists read from the whole corpus's self-join
    std::size_t searched = 0;   ///< lists searched directly (too many cached neighbours filtered)
};

/// Profiles of the ideas of `input` (vectors normalised by the index, which must be built on corpus.vectors()). One search per idea,
/// one self-join of the whole corpus (cached in the corpus directory like `novelty index`'s,
/// keyed by k_neighbor and k_neighbor + extra), and direct searches for the few lists that the
/// cutoff and exclusions thin below k_neighbor. Exact: a list filtered from the whole corpus's
/// top (k_neighbor + extra) is the prefix's top k_neighbor whenever k_neighbor entries survive.
/// Throws UsageError for p > k_idea, sizes above SearchIndex::max_k, or an idea (or one of its
/// p nearest) that cannot reach enough papers within its cutoff and exclusions.
std::vector<NeighborProfile> neighbor_profiles(const Corpus& corpus, SearchIndex& index, const ScoreInput& input,
                                               const ProfileOptions& options, ProfileStats* stats = nullptr);

}  // namespace novelty
