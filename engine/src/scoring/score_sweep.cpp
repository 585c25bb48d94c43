// Score variants computed from neighbour profiles (docs/scoring.md, "The score sweep").
#include "scoring/score_sweep.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace novelty {

namespace {

std::size_t max_of(const std::vector<std::size_t>& values) {
    return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

std::string kind_tag(DensityKind kind) { return density_kind_name(kind); }

}  // namespace

std::size_t SweepGrid::max_p() const { return std::max(max_of(p), base_p); }
std::size_t SweepGrid::k_idea() const { return std::max({max_p(), max_of(q), max_of(hd), base_q, base_hd}); }
std::size_t SweepGrid::k_neighbor() const { return std::max({max_of(q), max_of(hd), base_q, base_hd}); }

double profile_density(const NeighborProfile& profile, std::size_t q, DensityKind kind) {
    return density_of(profile.sims, q, kind);
}

double profile_rnd(const NeighborProfile& profile, std::size_t p, std::size_t q, DensityKind kind) {
    if (p == 0 || p * profile.k_neighbor > profile.neighbor_sims.size())
        throw UsageError("the profile keeps fewer than p = " + std::to_string(p) + " neighbours' lists");
    if (q > profile.k_neighbor)
        throw UsageError("the profile keeps " + std::to_string(profile.k_neighbor) + " neighbours per list, not q = " +
                         std::to_string(q));
    const double own = profile_density(profile, q, kind);
    std::vector<double> others(p);
    for (std::size_t r = 0; r < p; ++r)
        others[r] = density_of(std::span<const float>(profile.neighbor(r), profile.k_neighbor), q, kind);
    return relative_rank(own, others);
}

std::vector<double> average_ranks(std::span<const double> values) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < values.size(); ++i)
        if (!std::isnan(values[i])) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<double> ranks(values.size(), std::nan(""));
    for (std::size_t begin = 0; begin < order.size();) {
        std::size_t end = begin + 1;
        while (end < order.size() && values[order[end]] == values[order[begin]]) ++end;
        const double rank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2.0;
        for (std::size_t t = begin; t < end; ++t) ranks[order[t]] = rank;
        begin = end;
    }
    return ranks;
}

std::vector<SweepCandidate> sweep_candidates(const std::vector<NeighborProfile>& profiles, const SweepGrid& grid) {
    std::vector<SweepCandidate> out;
    auto add = [&](std::string name, std::string family, auto&& fn) {
        SweepCandidate c{std::move(name), std::move(family), {}, true};
        c.scores.reserve(profiles.size());
        for (const NeighborProfile& profile : profiles) c.scores.push_back(fn(profile));
        out.push_back(std::move(c));
    };
    for (DensityKind kind : grid.kinds)
        for (std::size_t p : grid.p)
            for (std::size_t q : grid.q)
                add("rnd[" + kind_tag(kind) + ",P=" + std::to_string(p) + ",Q=" + std::to_string(q) + "]", "rnd",
                    [&](const NeighborProfile& pr) { return profile_rnd(pr, p, q, kind); });
    for (DensityKind kind : grid.kinds)
        for (std::size_t q : grid.q)
            add("density[" + kind_tag(kind) + ",Q=" + std::to_string(q) + "]", "density",
                [&](const NeighborProfile& pr) { return profile_density(pr, q, kind); });
    for (std::size_t p : grid.p)
        add("density_p[P=" + std::to_string(p) + "]", "density_p",
            [&](const NeighborProfile& pr) { return profile_density(pr, p, DensityKind::mean_cosine); });
    for (std::size_t n : grid.hd)
        add("hd[n=" + std::to_string(n) + "]", "hd",
            [&](const NeighborProfile& pr) { return profile_density(pr, n, DensityKind::mean_euclidean); });
    for (std::size_t p : grid.p)
        for (std::size_t n : grid.hd)
            add("rel_hd[P=" + std::to_string(p) + ",n=" + std::to_string(n) + "]", "rel_hd",
                [&](const NeighborProfile& pr) { return profile_rnd(pr, p, n, DensityKind::mean_euclidean); });
    for (std::size_t p : grid.p)
        add("mean[rnd,rel_hd][P=" + std::to_string(p) + "]", "mean_rnd_rel_hd", [&](const NeighborProfile& pr) {
            return (profile_rnd(pr, p, grid.base_q, DensityKind::mean_cosine) +
                    profile_rnd(pr, p, grid.base_hd, DensityKind::mean_euclidean)) / 2.0;
        });
    std::vector<double> rnd, hd;
    for (const NeighborProfile& pr : profiles) {
        rnd.push_back(profile_rnd(pr, grid.base_p, grid.base_q, DensityKind::mean_cosine));
        hd.push_back(profile_density(pr, grid.base_hd, DensityKind::mean_euclidean));
    }
    const std::vector<double> rnd_rank = average_ranks(rnd), hd_rank = average_ranks(hd);
    SweepCandidate avg{"rank_avg[rnd,hd]", "rank_avg", {}, false};
    for (std::size_t i = 0; i < profiles.size(); ++i) avg.scores.push_back((rnd_rank[i] + hd_rank[i]) / 2.0);
    out.push_back(std::move(avg));
    return out;
}

}  // namespace novelty
