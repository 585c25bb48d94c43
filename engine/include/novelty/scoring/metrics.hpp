// Evaluation metrics for novelty scores: AUROC with ties, its stratified bootstrap interval, and
// summaries of score distributions. Pure functions over plain arrays.
//
// Conventions shared by every function here:
// - A score is a double; NaN means "no score" (a JSON null) and that item is left out.
// - A label is 1 (positive: novel) or 0 (negative); anything else is a UsageError.
// - Higher scores mean more novel, so AUROC is the probability that a random positive scores
//   above a random negative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace novelty {

/// AUROC of one set of scores.
struct Auroc {
    /// The AUROC in [0, 1]; empty when there is no positive or no negative left.
    std::optional<double> value;
    std::size_t n_pos = 0;      ///< positives with a score
    std::size_t n_neg = 0;      ///< negatives with a score
    std::size_t n_missing = 0;  ///< items left out because their score is NaN
    /// Why `value` is empty: "no positives", "no negatives", "no scores" (every score NaN) or
    /// "no positives and no negatives" (no items); empty when there is a value.
    std::string reason;
};

/// Exact AUROC, the Mann-Whitney U statistic over n_pos * n_neg: every (positive, negative) pair
/// counts 1 when the positive scores higher, 1/2 when the two scores are equal (ties), 0 otherwise.
/// Computed from ranks with the average rank given to tied scores, in O(n log n).
/// Items whose score is NaN are left out. Throws UsageError when the spans differ in length or a
/// label is not 0 or 1.
Auroc auroc(std::span<const double> scores, std::span<const int> labels);

/// A two-sided percentile interval.
struct Interval {
    double lo = 0;
    double hi = 0;
};

/// Percentile bootstrap interval of the AUROC at `level` (0.95 for a 95% interval).
/// Stratified: each replicate draws n_pos items with replacement from the positives and n_neg
/// from the negatives (so every replicate has an AUROC), with the same tie rule as auroc().
/// The bounds are the (1-level)/2 and (1+level)/2 quantiles of the replicate AUROCs, linearly
/// interpolated (as quantile() below). Deterministic: the same inputs, `replicates` and `seed`
/// give the same interval on every platform (the generator is built in, not std::).
/// Empty when auroc() has no value or `replicates` is 0. NaN scores are left out.
/// Throws UsageError for mismatched spans, bad labels or a level outside (0, 1).
std::optional<Interval> bootstrap_auroc_ci(std::span<const double> scores, std::span<const int> labels,
                                           std::size_t replicates, std::uint64_t seed, double level = 0.95);

/// AUROC(a) - AUROC(b) of two scores of the same items, with a paired bootstrap interval: the
/// question "is a better than b on these items?", which two separate intervals cannot answer.
struct PairedDifference {
    double value = 0;              ///< AUROC(a) - AUROC(b) over the items both score
    std::optional<Interval> ci;    ///< percentile interval of the replicate differences
    /// The share of replicates whose difference is 0 or less (a one-sided bootstrap p-value for
    /// "a above b"); NaN without replicates.
    double share_not_above = 0;
    std::size_t n_pos = 0, n_neg = 0, n_missing = 0;  ///< n_missing: items without both scores
};

/// The paired stratified bootstrap of AUROC(a) - AUROC(b). Items where a or b is NaN are left
/// out of both. Each replicate draws n_pos items with replacement from the positives and n_neg
/// from the negatives (in item order, with the seeded built-in generator) and computes both
/// AUROCs on that same draw (ties count 1/2, as auroc()); the interval holds the (1-level)/2
/// and (1+level)/2 quantiles of the differences (as quantile()). Deterministic on every
/// platform. Empty when no item with both scores is a positive or none is a negative; ci empty
/// when `replicates` is 0. Throws UsageError for spans of unequal length, labels other than 0/1
/// or a level outside (0, 1).
std::optional<PairedDifference> paired_auroc_difference(std::span<const double> a, std::span<const double> b,
                                                        std::span<const int> labels, std::size_t replicates,
                                                        std::uint64_t seed, double level = 0.95);

/// The q-quantile (q in [0, 1]) of values sorted ascending, with linear interpolation between
/// order statistics: position (n-1) q (numpy's default, "type 7"). NaN for an empty span.
double quantile(std::span<const double> sorted, double q);

/// Summary of a distribution of scores. With n = 0 every statistic is NaN; with n = 1, sd is 0.
struct Distribution {
    std::size_t n = 0;          ///< scores summarised (NaN scores left out)
    std::size_t n_missing = 0;  ///< NaN scores left out
    double mean = 0;
    double sd = 0;  ///< sample standard deviation (divisor n-1)
    double min = 0;
    double q1 = 0;      ///< quantile 0.25, as quantile()
    double median = 0;  ///< quantile 0.5
    double q3 = 0;      ///< quantile 0.75
    double max = 0;
};

/// n, mean, sd, min, quartiles and max of the scores that are not NaN.
Distribution summarize(std::span<const double> scores);

}  // namespace novelty
