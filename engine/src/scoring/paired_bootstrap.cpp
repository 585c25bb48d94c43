// The paired bootstrap of the difference of two AUROCs on the same items (metrics.hpp).
#include "novelty/scoring/metrics.hpp"

#include "novelty/util/error.hpp"
#include "split_mix64.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace novelty {

namespace {

/// One score's items (indices into the kept items) in ascending score order, cut into runs of
/// equal scores: run r covers order[run_start[r], run_start[r + 1]).
struct SortedRuns {
    std::vector<std::size_t> order;
    std::vector<std::size_t> run_start;
};

SortedRuns sorted_runs(const std::vector<double>& scores) {
    SortedRuns out;
    out.order.resize(scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) out.order[i] = i;
    std::sort(out.order.begin(), out.order.end(), [&](std::size_t x, std::size_t y) { return scores[x] < scores[y]; });
    for (std::size_t k = 0; k < out.order.size(); ++k)
        if (k == 0 || scores[out.order[k]] != scores[out.order[k - 1]]) out.run_start.push_back(k);
    out.run_start.push_back(out.order.size());
    return out;
}

/// AUROC with each item counted `weight` times: every positive copy beats the negative copies
/// of lower runs and ties (1/2) with those of its own run.
double weighted_auroc(const SortedRuns& runs, const std::vector<int>& labels, const std::vector<std::uint32_t>& weight,
                      double n_pos, double n_neg) {
    double u = 0, neg_below = 0;
    for (std::size_t r = 0; r + 1 < runs.run_start.size(); ++r) {
        double pos = 0, neg = 0;
        for (std::size_t k = runs.run_start[r]; k < runs.run_start[r + 1]; ++k) {
            const std::size_t i = runs.order[k];
            (labels[i] == 1 ? pos : neg) += weight[i];
        }
        u += pos * (neg_below + 0.5 * neg);
        neg_below += neg;
    }
    return u / (n_pos * n_neg);
}

}  // namespace

std::optional<PairedDifference> paired_auroc_difference(std::span<const double> a, std::span<const double> b,
                                                        std::span<const int> labels, std::size_t replicates,
                                                        std::uint64_t seed, double level) {
    if (a.size() != labels.size() || b.size() != labels.size())
        throw UsageError("a paired AUROC difference needs two scores and one label per item; got " +
                         std::to_string(a.size()) + ", " + std::to_string(b.size()) + " and " +
                         std::to_string(labels.size()));
    if (!(level > 0 && level < 1)) throw UsageError("a bootstrap interval's level must lie between 0 and 1");
    PairedDifference out;
    std::vector<double> sa, sb;
    std::vector<int> kept_labels;
    std::vector<std::size_t> pos, neg;  // kept item indices, in item order
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] != 0 && labels[i] != 1)
            throw UsageError("label " + std::to_string(i) + " is " + std::to_string(labels[i]) + "; labels are 0 or 1");
        if (std::isnan(a[i]) || std::isnan(b[i])) {
            ++out.n_missing;
            continue;
        }
        (labels[i] == 1 ? pos : neg).push_back(sa.size());
        sa.push_back(a[i]);
        sb.push_back(b[i]);
        kept_labels.push_back(labels[i]);
    }
    out.n_pos = pos.size();
    out.n_neg = neg.size();
    if (pos.empty() || neg.empty()) return std::nullopt;
    const SortedRuns runs_a = sorted_runs(sa), runs_b = sorted_runs(sb);
    const double n_pos = static_cast<double>(pos.size()), n_neg = static_cast<double>(neg.size());
    std::vector<std::uint32_t> weight(sa.size(), 1);
    out.value = weighted_auroc(runs_a, kept_labels, weight, n_pos, n_neg) -
                weighted_auroc(runs_b, kept_labels, weight, n_pos, n_neg);
    if (replicates == 0) {
        out.share_not_above = std::numeric_limits<double>::quiet_NaN();
        return out;
    }
    detail::SplitMix64 rng(seed);
    std::vector<double> diffs(replicates);
    std::size_t not_above = 0;
    for (std::size_t r = 0; r < replicates; ++r) {
        std::fill(weight.begin(), weight.end(), 0);
        for (std::size_t k = 0; k < pos.size(); ++k) ++weight[pos[rng.below(pos.size())]];
        for (std::size_t k = 0; k < neg.size(); ++k) ++weight[neg[rng.below(neg.size())]];
        diffs[r] = weighted_auroc(runs_a, kept_labels, weight, n_pos, n_neg) -
                   weighted_auroc(runs_b, kept_labels, weight, n_pos, n_neg);
        not_above += diffs[r] <= 0;
    }
    std::sort(diffs.begin(), diffs.end());
    const double tail = (1 - level) / 2;
    out.ci = Interval{quantile(diffs, tail), quantile(diffs, 1 - tail)};
    out.share_not_above = static_cast<double>(not_above) / static_cast<double>(replicates);
    return out;
}

}  // namespace novelty
