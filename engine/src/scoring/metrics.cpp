#include "novelty/scoring/metrics.hpp"

#include "novelty/util/error.hpp"
#include "split_mix64.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace novelty {

namespace {

void check_inputs(std::span<const double> scores, std::span<const int> labels) {
    if (scores.size() != labels.size())
        throw UsageError("AUROC needs one label per score; got " + std::to_string(scores.size()) + " scores and " +
                         std::to_string(labels.size()) + " labels");
    for (std::size_t i = 0; i < labels.size(); ++i)
        if (labels[i] != 0 && labels[i] != 1)
            throw UsageError("label " + std::to_string(i) + " is " + std::to_string(labels[i]) + "; labels are 0 or 1");
}

/// The scored items in ascending score order, grouped into runs of equal scores.
struct TieGroups {
    std::vector<std::size_t> pos_group;  ///< tie group of each positive
    std::vector<std::size_t> neg_group;  ///< tie group of each negative
    std::size_t n_groups = 0;
    std::size_t n_missing = 0;
};

TieGroups tie_groups(std::span<const double> scores, std::span<const int> labels) {
    TieGroups out;
    std::vector<std::size_t> order;
    order.reserve(scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) {
        if (std::isnan(scores[i])) ++out.n_missing;
        else order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
    for (std::size_t k = 0; k < order.size(); ++k) {
        if (k == 0 || scores[order[k]] != scores[order[k - 1]]) ++out.n_groups;
        (labels[order[k]] == 1 ? out.pos_group : out.neg_group).push_back(out.n_groups - 1);
    }
    return out;
}

/// U / (n_pos n_neg) from per-group counts: each positive beats the negatives in lower groups
/// and ties (1/2) with those in its own group.
double auroc_from_counts(const std::vector<std::uint32_t>& pos, const std::vector<std::uint32_t>& neg,
                         double n_pos, double n_neg) {
    double u = 0, neg_below = 0;
    for (std::size_t g = 0; g < pos.size(); ++g) {
        u += pos[g] * (neg_below + 0.5 * neg[g]);
        neg_below += neg[g];
    }
    return u / (n_pos * n_neg);
}

using detail::SplitMix64;

std::string empty_reason(std::size_t n_pos, std::size_t n_neg, std::size_t n_missing) {
    if (n_pos == 0 && n_neg == 0) return n_missing > 0 ? "no scores" : "no positives and no negatives";
    return n_pos == 0 ? "no positives" : "no negatives";
}

}  // namespace

Auroc auroc(std::span<const double> scores, std::span<const int> labels) {
    check_inputs(scores, labels);
    Auroc out;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < scores.size(); ++i) {
        if (std::isnan(scores[i])) {
            ++out.n_missing;
            continue;
        }
        order.push_back(i);
        (labels[i] == 1 ? out.n_pos : out.n_neg) += 1;
    }
    if (out.n_pos == 0 || out.n_neg == 0) {
        out.reason = empty_reason(out.n_pos, out.n_neg, out.n_missing);
        return out;
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
    // Ranks 1..n; a run of equal scores at positions [begin, end) shares the rank (begin+1+end)/2.
    double rank_sum_pos = 0;
    for (std::size_t begin = 0; begin < order.size();) {
        std::size_t end = begin + 1;
        while (end < order.size() && scores[order[end]] == scores[order[begin]]) ++end;
        const double rank = (static_cast<double>(begin) + 1 + static_cast<double>(end)) / 2;
        for (std::size_t k = begin; k < end; ++k)
            if (labels[order[k]] == 1) rank_sum_pos += rank;
        begin = end;
    }
    const double n_pos = static_cast<double>(out.n_pos), n_neg = static_cast<double>(out.n_neg);
    const double u = rank_sum_pos - n_pos * (n_pos + 1) / 2;
    out.value = u / (n_pos * n_neg);
    return out;
}

std::optional<Interval> bootstrap_auroc_ci(std::span<const double> scores, std::span<const int> labels,
                                           std::size_t replicates, std::uint64_t seed, double level) {
    check_inputs(scores, labels);
    if (!(level > 0 && level < 1)) throw UsageError("a bootstrap interval's level must lie between 0 and 1");
    const TieGroups groups = tie_groups(scores, labels);
    const std::size_t n_pos = groups.pos_group.size(), n_neg = groups.neg_group.size();
    if (replicates == 0 || n_pos == 0 || n_neg == 0) return std::nullopt;

    SplitMix64 rng(seed);
    std::vector<std::uint32_t> pos(groups.n_groups), neg(groups.n_groups);
    std::vector<double> values(replicates);
    for (std::size_t r = 0; r < replicates; ++r) {
        std::fill(pos.begin(), pos.end(), 0);
        std::fill(neg.begin(), neg.end(), 0);
        for (std::size_t k = 0; k < n_pos; ++k) ++pos[groups.pos_group[rng.below(n_pos)]];
        for (std::size_t k = 0; k < n_neg; ++k) ++neg[groups.neg_group[rng.below(n_neg)]];
        values[r] = auroc_from_counts(pos, neg, static_cast<double>(n_pos), static_cast<double>(n_neg));
    }
    std::sort(values.begin(), values.end());
    const double tail = (1 - level) / 2;
    return Interval{quantile(values, tail), quantile(values, 1 - tail)};
}

double quantile(std::span<const double> sorted, double q) {
    if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
    const double h = (static_cast<double>(sorted.size()) - 1) * std::clamp(q, 0.0, 1.0);
    const auto lo = static_cast<std::size_t>(std::floor(h));
    if (lo + 1 >= sorted.size()) return sorted.back();
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

Distribution summarize(std::span<const double> scores) {
    Distribution out;
    std::vector<double> sorted;
    sorted.reserve(scores.size());
    for (double s : scores) {
        if (std::isnan(s)) ++out.n_missing;
        else sorted.push_back(s);
    }
    out.n = sorted.size();
    if (sorted.empty()) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        out.mean = out.sd = out.min = out.q1 = out.median = out.q3 = out.max = nan;
        return out;
    }
    std::sort(sorted.begin(), sorted.end());
    const double n = static_cast<double>(sorted.size());
    out.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
    double sum_sq = 0;
    for (double s : sorted) sum_sq += (s - out.mean) * (s - out.mean);
    out.sd = sorted.size() > 1 ? std::sqrt(sum_sq / (n - 1)) : 0.0;
    out.min = sorted.front();
    out.max = sorted.back();
    out.q1 = quantile(sorted, 0.25);
    out.median = quantile(sorted, 0.5);
    out.q3 = quantile(sorted, 0.75);
    return out;
}

}  // namespace novelty
