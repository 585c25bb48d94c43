// Density definitions and relative ranks shared by `novelty score` and `novelty eval sweep`
// (docs/scoring.md). Pure functions over a point's neighbour similarities, nearest first.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace novelty {

/// How a point's local density is read from its nearest neighbours' cosine similarities.
enum class DensityKind {
    mean_cosine,     ///< mean cosine distance (1 - sim) to the q nearest (RND's ND)
    kth_cosine,      ///< cosine distance to the q-th nearest
    mean_euclidean,  ///< mean Euclidean distance sqrt(2 - 2 sim) to the q nearest (HD's form)
};

/// "cos", "kth", "euclid".
std::string density_kind_name(DensityKind kind);
/// Parses "cos", "kth", "euclid"; throws UsageError otherwise.
DensityKind parse_density_kind(const std::string& text);

/// Euclidean distance between unit vectors of cosine similarity `sim`: sqrt(max(0, 2 - 2 sim)).
double unit_euclidean(double sim);

/// The density of a point from `sims`, its neighbours' similarities nearest first (the point
/// itself not among them), over the first q. Throws UsageError when q is 0 or sims holds fewer
/// than q values. Larger = sparser (a distance), so a larger density means a more novel point.
double density_of(std::span<const float> sims, std::size_t q, DensityKind kind);

/// RND's relative rank: 100 x |{ j : others[j] <= value }| / others.size(), in [0, 100]
/// (ties count as "at most", as in the paper). NaN when `others` is empty.
double relative_rank(double value, std::span<const double> others);

}  // namespace novelty
