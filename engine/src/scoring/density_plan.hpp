// How the densities a batch of ideas lacks are found: which row prefixes are cheaper to self-join
// than to search row by row (docs/scoring.md, "Choosing how densities are found").
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace novelty {

/// A density the store does not hold: corpus row `row`'s list within [0, limit).
struct MissingDensity {
    std::size_t row, limit;
};

/// One prefix the plan self-joins, with what it weighed.
struct PlannedJoin {
    std::size_t prefix = 0;        ///< rows [0, prefix) joined among themselves
    std::size_t rows_reached = 0;  ///< distinct rows whose list at exactly this prefix is missing
    double join_cost = 0;          ///< pairs of the symmetric join, weighted (cost units)
    double search_cost = 0;        ///< row-pairs the searches it replaces would scan (cost units)
};

/// The plan: prefixes to self-join (largest first); every other missing list is searched.
struct DensityPlan {
    std::vector<PlannedJoin> joins;
    std::size_t missing = 0;        ///< distinct (row, limit) lists missing
    std::size_t prefixes = 0;       ///< distinct limits among them
    double search_cost = 0;         ///< the cost of searching every missing list (no join)
    /// One line for the progress output and provenance, e.g. "self-join of 87,691 rows
    /// (41,022 reached) + 3 lists searched" or "on demand (1,204 lists)".
    std::string summary() const;
};

/// Relative cost of one pair of a symmetric self-join against one query-row pair of a search
/// (both sides' collectors fed from one product, per-row collectors kept for the whole prefix).
/// Measured on the CPU backend (float32, 87,691 x 384, 2 threads, an Intel Xeon with AMX: 9.6 ns
/// a join pair against 7.5 ns a search pair; docs/benchmarks.md, "Main job"); it only moves the
/// crossing point (a join when more than 0.65 of a prefix's rows are missing), never a result.
inline constexpr double self_join_pair_weight = 1.3;

/// Chooses, for the missing lists, the prefixes whose symmetric self-join (L (L - 1) / 2 pairs,
/// weighted by `pair_weight`) costs less than the searches it saves. A row's lists at several
/// limits are searched as consecutive segments (each row pair scanned once, up to its largest
/// limit), so joining prefix L saves, for each row missing exactly there, the rows between its
/// next lower missing limit (0 if none) and L. Prefixes are weighed from the largest down;
/// duplicates in `missing` count once. Deterministic: the same input gives the same plan.
DensityPlan plan_densities(std::vector<MissingDensity> missing, double pair_weight = self_join_pair_weight);

}  // namespace novelty
