// Near-duplicate ideas: the ideas are joined with themselves through a search backend and
// grouped into clusters, the connected components of the graph whose edges are the pairs with
// cosine similarity at or above a threshold (single linkage: a chain a~b~c is one cluster even
// when a and c are far apart). Exact for any number of ideas: no n x n matrix is held; memory
// grows with n x k (docs/dedup.md gives the argument).
#pragma once

#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

/// How a cluster's representative is chosen.
enum class Representative {
    /// The member with the highest mean similarity to the other members; means within 1e-6 of
    /// the highest are a tie, won by the lowest index (float32 rounding does not pick it).
    central,
    /// The member with the lowest index (the first in input order).
    first,
};

struct DedupOptions {
    /// Pairs with cosine similarity >= threshold are linked.
    float threshold = 0.8f;
    Representative representative = Representative::central;
    /// Neighbours per idea in the first pass; ideas with at least this many above the threshold
    /// are searched again (tuning only: the clusters do not depend on it). Clamped to 1..max_k.
    std::size_t first_k = 32;
    ProgressFn progress;  ///< progress of the first pass (the self-join)
};

/// The clusters of n ideas. Clusters are numbered 0.. in the order of their lowest member index.
struct DedupResult {
    std::size_t n_ideas = 0;
    std::vector<std::size_t> cluster;          ///< per idea: its cluster
    std::vector<std::size_t> representative;   ///< per cluster: the representative's idea index
    std::vector<std::size_t> cluster_size;     ///< per cluster: its member count
    /// Per idea: cosine similarity to its cluster's representative (1 for the representative),
    /// within [-1, 1] (exact copies, which float rounding can put above 1, give 1).
    std::vector<float> sim_to_representative;
    /// Per idea: mean cosine similarity to the other members of its cluster, within [-1, 1]; NaN
    /// for a singleton.
    std::vector<double> mean_sim;
    /// Rounds of searches after the first pass that exactness needed (0 when no idea had
    /// first_k or more neighbours above the threshold).
    std::size_t extra_rounds = 0;
};

/// Clusters n ideas given as n x dim float32 vectors (any norm; normalised here). `active`, when
/// not empty, has n entries: an idea with active[i] == 0 (no text, say) is a singleton that is
/// never linked, and its vector is not read. Throws UsageError for an active idea with a zero or
/// non-finite vector, for a threshold outside [-1, 1] or NaN, and for mismatched sizes.
/// Similarities reported are computed on the host in double from the normalised float32 vectors;
/// which pairs are linked is the backend's call (a float16 CUDA backend can differ from the CPU
/// for pairs within about 1e-3 of the threshold).
DedupResult dedup_ideas(SearchBackend& backend, const float* vectors, std::size_t n, std::size_t dim,
                        const std::vector<char>& active, const DedupOptions& options);

/// An idea's closest archived idea or paper.
struct ArchiveMatch {
    std::int64_t row = -1;  ///< archive row; -1 when nothing reaches the threshold
    float sim = 0;
};

/// For each of n ideas (n x dim float32, any norm), the most similar archive row when its
/// similarity is >= threshold (ties to the lower row), else row -1. Inactive ideas (as in
/// dedup_ideas) get row -1. The archive rows must be L2-normalised (a corpus's vectors are).
std::vector<ArchiveMatch> match_archive(SearchBackend& backend, const VectorView& archive, const float* vectors,
                                        std::size_t n, std::size_t dim, const std::vector<char>& active,
                                        float threshold);

}  // namespace novelty
