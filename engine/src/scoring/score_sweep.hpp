// The score sweep of `novelty eval sweep` (docs/scoring.md): many novelty-score variants computed
// from neighbour profiles, evaluated per group with AUROC, bootstrap intervals and the KS
// statistic between groups, a logistic combination fitted with cross-validation, and the winner
// chosen on training folds only.
#pragma once

#include "scoring/density_variants.hpp"
#include "novelty/scoring/metrics.hpp"
#include "scoring/neighbor_profiles.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace novelty {

/// RND of a profile: the idea's density (definition `kind`, its q nearest) ranked among those
/// of its p nearest papers (relative_rank). Needs p <= profile's p, q <= k_idea and k_neighbor.
double profile_rnd(const NeighborProfile& profile, std::size_t p, std::size_t q, DensityKind kind);
/// The idea's own (absolute) density over its q nearest papers.
double profile_density(const NeighborProfile& profile, std::size_t q, DensityKind kind);

/// The variants swept. Families (names as printed):
///   rnd[KIND,P=p,Q=q]       RND with density KIND (cos, kth, euclid), for every p, q, kind;
///   density[KIND,Q=q]       the idea's absolute density, for every q and kind;
///   density_p[P=p]          the absolute density over the P first-level neighbours (cos);
///   hd[n=n]                 HD over n neighbours (= density[euclid,Q=n]);
///   rel_hd[P=p,n=n]         relative HD: HD ranked among the p nearest papers' own HDs
///                           (= rnd[euclid,P=p,Q=n]);
///   mean[rnd,rel_hd][P=p]   the mean of rnd[cos,P=p,Q=base_q] and rel_hd[P=p,n=base_hd];
///   rank_avg[rnd,hd]        the mean of the batch ranks of rnd (base) and hd (base);
///   logistic[...]           added by evaluate_sweep: out-of-fold logistic combination.
struct SweepGrid {
    std::vector<std::size_t> p{10, 20, 50, 100, 200};
    std::vector<std::size_t> q{5, 10, 20, 50, 100, 200};
    std::vector<std::size_t> hd{1, 3, 5, 10, 20, 50};
    std::vector<DensityKind> kinds{DensityKind::mean_cosine, DensityKind::kth_cosine, DensityKind::mean_euclidean};
    std::size_t base_p = 100, base_q = 50, base_hd = 5;  ///< the defaults of `novelty score`

    std::size_t max_p() const;
    std::size_t k_idea() const;      ///< max over p, q, hd
    std::size_t k_neighbor() const;  ///< max over q, hd
};

struct SweepCandidate {
    std::string name;
    std::string family;
    std::vector<double> scores;  ///< per idea; higher = more novel
    /// A score of each idea by itself, so it can be a `score` method and be picked as the winner
    /// (false for the batch-rank average and for the logistic combination, whose out-of-fold
    /// scores come from models fitted without the idea).
    bool selectable = true;
};

/// Every variant of the grid, from profiles made with at least max_p(), k_idea(), k_neighbor().
std::vector<SweepCandidate> sweep_candidates(const std::vector<NeighborProfile>& profiles, const SweepGrid& grid);

/// Average ranks (1-based, ties share their mean rank) of values; NaN stays NaN.
std::vector<double> average_ranks(std::span<const double> values);

/// Two-sample Kolmogorov-Smirnov statistic sup_x |F_a(x) - F_b(x)| of the values that are not
/// NaN; NaN when either side is empty.
double ks_statistic(std::span<const double> a, std::span<const double> b);

/// Fold of each item, 0..k-1: items are split by (group, label), each stratum shuffled with the
/// seed and dealt round-robin, so every fold holds about 1/k of each stratum.
std::vector<std::size_t> stratified_folds(std::span<const int> labels, std::span<const std::string> groups,
                                          std::size_t k, std::uint64_t seed);

/// A logistic regression on standardised features: p(novel) = sigmoid(bias + sum w_f z_f) with
/// z_f = (x_f - mean_f) / sd_f. Fitted by Newton's method with an L2 penalty on w.
struct LogisticModel {
    std::vector<double> mean, sd, weights;
    double bias = 0;
    /// The linear score (log odds) of one item's features.
    double predict(std::span<const double> features) const;
};
/// Fits on the rows of `features` (n x f, row-major) whose `use` flag is set; rows with a NaN
/// feature are skipped. Throws UsageError when no positive or no negative is left.
LogisticModel fit_logistic(std::span<const double> features, std::size_t n_features, std::span<const int> labels,
                           std::span<const char> use, double l2 = 1e-2);

struct GroupResult {
    std::string group;  ///< "all" first, then the groups in name order
    Auroc auroc;
    std::optional<Interval> ci;
};

struct CandidateResult {
    std::vector<GroupResult> groups;
    double ks = 0;     ///< the largest KS statistic between two groups' scores (NaN when no two groups hold a score)
    /// The same, among the novel ideas only (label 1) and among the others only (label 0): a score
    /// on the same scale in every group keeps these small even when the groups' ideas are not
    /// equally easy to tell apart (which alone moves `ks`). NaN when no two groups both hold
    /// ideas of that label.
    double ks_novel = 0, ks_established = 0;
    double worst = 0;  ///< the smallest AUROC over "all" and every group (NaN when one is missing)
};

/// How the winner was chosen in each outer fold: on the other folds only.
struct FoldPick {
    std::size_t candidate = 0;
    double train_criterion = 0;
    double test_worst = 0;  ///< worst AUROC of the pick on the held-out fold
    double test_all = 0;    ///< its AUROC over the held-out fold's ideas
};

struct SweepOptions {
    std::size_t bootstrap = 200;
    std::uint64_t seed = 1;
    std::size_t folds = 5;
    double max_ks = 0.1;  ///< candidates above it on the training folds rank after those within it
    std::vector<std::string> logistic_features{"rnd[cos,P=100,Q=50]", "hd[n=5]", "density[cos,Q=50]",
                                               "rel_hd[P=100,n=5]", "density_p[P=100]"};
};

struct SweepReport {
    std::vector<std::string> group_names;     ///< "all" then the groups
    std::vector<CandidateResult> results;     ///< per candidate (the logistic one appended)
    std::vector<std::size_t> fold_of;         ///< per idea
    std::vector<FoldPick> picks;              ///< per outer fold
    std::size_t winner = 0;                   ///< the candidate picked in most folds
    std::optional<LogisticModel> logistic_full;  ///< fitted on every idea (reported, not scored)
};

/// The selection criterion on a subset: the worst AUROC over "all" and every group, less 1 when
/// the KS statistic between groups exceeds max_ks (so any candidate within it ranks first).
double selection_criterion(std::span<const double> scores, std::span<const int> labels,
                           std::span<const std::string> groups, std::span<const char> use, double max_ks);

/// Evaluates the candidates (appending the logistic combination's out-of-fold scores to them),
/// and picks the winner by cross-validation: in each fold, the selectable candidate with the
/// best criterion on the other folds; the winner is the candidate picked in most folds (ties:
/// the higher mean training criterion, then the earlier candidate).
SweepReport evaluate_sweep(std::vector<SweepCandidate>& candidates, std::span<const int> labels,
                           std::span<const std::string> groups, const SweepOptions& options);

/// One paired comparison of two variants: AUROC(a) - AUROC(b) over every idea ("all") and in
/// each group, with paired bootstrap intervals (paired_auroc_difference, options.bootstrap
/// replicates, options.seed).
struct PairedComparison {
    std::string a, b;
    std::vector<std::string> groups;                     ///< "all" then the groups in name order
    std::vector<std::optional<PairedDifference>> result;  ///< per entry of groups
};

/// Parses "A:B[,A:B...]": pairs of variant names as printed (names hold commas inside their
/// brackets, so only commas outside brackets separate pairs). Throws UsageError naming
/// parameter "paired" for an item without exactly one ':' outside brackets or with an empty side.
std::vector<std::pair<std::string, std::string>> parse_variant_pairs(const std::string& text);

/// The paired comparisons of the named candidates (any candidate, the logistic one included).
/// Throws UsageError naming parameter "paired" when a name is not a candidate's.
std::vector<PairedComparison> paired_comparisons(const std::vector<SweepCandidate>& candidates,
                                                 std::span<const int> labels, std::span<const std::string> groups,
                                                 const std::vector<std::pair<std::string, std::string>>& pairs,
                                                 const SweepOptions& options);

}  // namespace novelty
