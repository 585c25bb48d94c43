// Density definitions and relative ranks (docs/scoring.md).
#include "scoring/density_variants.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace novelty {

std::string density_kind_name(DensityKind kind) {
    switch (kind) {
        case DensityKind::mean_cosine: return "cos";
        case DensityKind::kth_cosine: return "kth";
        case DensityKind::mean_euclidean: return "euclid";
    }
    return "?";
}

DensityKind parse_density_kind(const std::string& text) {
    if (text == "cos") return DensityKind::mean_cosine;
    if (text == "kth") return DensityKind::kth_cosine;
    if (text == "euclid") return DensityKind::mean_euclidean;
    throw UsageError("unknown density definition '" + text + "' (expected cos, kth or euclid)");
}

double unit_euclidean(double sim) { return std::sqrt(std::max(0.0, 2.0 - 2.0 * sim)); }

double density_of(std::span<const float> sims, std::size_t q, DensityKind kind) {
    if (q == 0) throw UsageError("a density needs q >= 1");
    if (sims.size() < q)
        throw UsageError("a density over q = " + std::to_string(q) + " neighbours was given only " +
                         std::to_string(sims.size()));
    if (kind == DensityKind::kth_cosine) return 1.0 - static_cast<double>(sims[q - 1]);
    double sum = 0;
    for (std::size_t r = 0; r < q; ++r) {
        const double sim = static_cast<double>(sims[r]);
        sum += kind == DensityKind::mean_cosine ? 1.0 - sim : unit_euclidean(sim);
    }
    return sum / static_cast<double>(q);
}

double relative_rank(double value, std::span<const double> others) {
    if (others.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::size_t at_most = 0;
    for (double d : others)
        if (d <= value) ++at_most;
    return 100.0 * static_cast<double>(at_most) / static_cast<double>(others.size());
}

}  // namespace novelty
