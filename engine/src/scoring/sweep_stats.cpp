// Statistics of the score sweep: KS between groups, stratified folds, the cross-validated
// logistic combination and the choice of the winner on training folds (docs/scoring.md).
#include "novelty/util/error.hpp"
#include "scoring/score_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace novelty {

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// splitmix64: a small generator with the same sequence on every platform.
std::uint64_t next_random(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

std::vector<std::string> group_list(std::span<const std::string> groups) {
    std::vector<std::string> names(groups.begin(), groups.end());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

/// Scores and labels of the used items of one group ("" = every group).
void gather(std::span<const double> scores, std::span<const int> labels, std::span<const std::string> groups,
            std::span<const char> use, const std::string& group, std::vector<double>& s, std::vector<int>& l) {
    s.clear();
    l.clear();
    for (std::size_t i = 0; i < scores.size(); ++i)
        if ((use.empty() || use[i]) && (group.empty() || groups[i] == group)) {
            s.push_back(scores[i]);
            l.push_back(labels[i]);
        }
}

/// The largest KS statistic between two groups, over the used items; NaN when no two groups
/// both hold a used item (or with fewer than two groups).
double max_group_ks(std::span<const double> scores, std::span<const std::string> groups, std::span<const char> use,
                    const std::vector<std::string>& names) {
    if (names.size() < 2) return nan_value;
    std::vector<std::vector<double>> by_group(names.size());
    for (std::size_t i = 0; i < scores.size(); ++i)
        if (use.empty() || use[i])
            by_group[std::lower_bound(names.begin(), names.end(), groups[i]) - names.begin()].push_back(scores[i]);
    double worst = nan_value;
    for (std::size_t a = 0; a < names.size(); ++a)
        for (std::size_t b = a + 1; b < names.size(); ++b) {
            const double ks = ks_statistic(by_group[a], by_group[b]);
            if (!std::isnan(ks) && (std::isnan(worst) || ks > worst)) worst = ks;
        }
    return worst;
}

/// max_group_ks among the items of one label only.
double max_group_ks_of_label(std::span<const double> scores, std::span<const int> labels,
                             std::span<const std::string> groups, int label, const std::vector<std::string>& names) {
    std::vector<char> use(scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) use[i] = labels[i] == label;
    return max_group_ks(scores, groups, use, names);
}

/// The worst AUROC over every item used and each group's; NaN when one has no value.
double worst_auroc(std::span<const double> scores, std::span<const int> labels, std::span<const std::string> groups,
                   std::span<const char> use, const std::vector<std::string>& names) {
    std::vector<double> s;
    std::vector<int> l;
    double worst = std::numeric_limits<double>::infinity();
    std::vector<std::string> all_and_groups{""};
    all_and_groups.insert(all_and_groups.end(), names.begin(), names.end());
    for (const std::string& g : all_and_groups) {
        gather(scores, labels, groups, use, g, s, l);
        const Auroc a = auroc(s, l);
        if (!a.value) return nan_value;
        worst = std::min(worst, *a.value);
    }
    return worst;
}

/// Solves A x = b (n x n, row-major) by Gaussian elimination with partial pivoting.
std::vector<double> solve(std::vector<double> a, std::vector<double> b) {
    const std::size_t n = b.size();
    for (std::size_t c = 0; c < n; ++c) {
        std::size_t pivot = c;
        for (std::size_t r = c + 1; r < n; ++r)
            if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
        if (std::fabs(a[pivot * n + c]) < 1e-300) throw UsageError("logistic fit: singular system");
        for (std::size_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
        std::swap(b[c], b[pivot]);
        for (std::size_t r = c + 1; r < n; ++r) {
            const double f = a[r * n + c] / a[c * n + c];
            for (std::size_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    std::vector<double> x(n);
    for (std::size_t r = n; r-- > 0;) {
        double sum = b[r];
        for (std::size_t k = r + 1; k < n; ++k) sum -= a[r * n + k] * x[k];
        x[r] = sum / a[r * n + r];
    }
    return x;
}

}  // namespace

double ks_statistic(std::span<const double> a, std::span<const double> b) {
    std::vector<double> x, y;
    for (double v : a)
        if (!std::isnan(v)) x.push_back(v);
    for (double v : b)
        if (!std::isnan(v)) y.push_back(v);
    if (x.empty() || y.empty()) return nan_value;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    std::size_t i = 0, j = 0;
    double best = 0;
    while (i < x.size() || j < y.size()) {
        // Step past every value equal to the smallest one left, on both sides, then compare.
        const double v = j == y.size() || (i < x.size() && x[i] <= y[j]) ? x[i] : y[j];
        while (i < x.size() && x[i] == v) ++i;
        while (j < y.size() && y[j] == v) ++j;
        best = std::max(best, std::fabs(static_cast<double>(i) / static_cast<double>(x.size()) -
                                        static_cast<double>(j) / static_cast<double>(y.size())));
    }
    return best;
}

std::vector<std::size_t> stratified_folds(std::span<const int> labels, std::span<const std::string> groups,
                                          std::size_t k, std::uint64_t seed) {
    if (k < 2) throw UsageError("cross-validation needs at least 2 folds");
    if (labels.size() != groups.size()) throw UsageError("stratified_folds: labels and groups differ in length");
    std::map<std::pair<std::string, int>, std::vector<std::size_t>> strata;
    for (std::size_t i = 0; i < labels.size(); ++i) strata[{groups[i], labels[i]}].push_back(i);
    std::vector<std::size_t> fold(labels.size(), 0);
    std::uint64_t state = seed;
    std::size_t start = 0;
    for (auto& [key, items] : strata) {
        for (std::size_t t = items.size(); t > 1; --t) std::swap(items[t - 1], items[next_random(state) % t]);
        for (std::size_t t = 0; t < items.size(); ++t) fold[items[t]] = (start + t) % k;
        start = (start + items.size()) % k;  // the next stratum's remainder fills other folds first
    }
    return fold;
}

double LogisticModel::predict(std::span<const double> features) const {
    double z = bias;
    for (std::size_t f = 0; f < weights.size(); ++f) z += weights[f] * (features[f] - mean[f]) / sd[f];
    return z;
}

LogisticModel fit_logistic(std::span<const double> features, std::size_t n_features, std::span<const int> labels,
                           std::span<const char> use, double l2) {
    const std::size_t n = labels.size(), d = n_features + 1;
    if (features.size() != n * n_features) throw UsageError("fit_logistic: features are not n x f");
    std::vector<std::size_t> rows;
    std::size_t pos = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!use.empty() && !use[i]) continue;
        bool finite = true;
        for (std::size_t f = 0; f < n_features; ++f) finite = finite && std::isfinite(features[i * n_features + f]);
        if (!finite) continue;
        rows.push_back(i);
        pos += labels[i] == 1;
    }
    if (pos == 0 || pos == rows.size()) throw UsageError("fit_logistic: needs both positives and negatives");
    LogisticModel m;
    m.mean.assign(n_features, 0);
    m.sd.assign(n_features, 0);
    for (std::size_t i : rows)
        for (std::size_t f = 0; f < n_features; ++f) m.mean[f] += features[i * n_features + f] / static_cast<double>(rows.size());
    for (std::size_t i : rows)
        for (std::size_t f = 0; f < n_features; ++f) {
            const double c = features[i * n_features + f] - m.mean[f];
            m.sd[f] += c * c / static_cast<double>(rows.size());
        }
    for (double& s : m.sd) s = s > 0 ? std::sqrt(s) : 1.0;
    std::vector<double> beta(d, 0.0), z(d);  // beta[0] = bias
    for (int iteration = 0; iteration < 50; ++iteration) {
        std::vector<double> grad(d, 0.0), hess(d * d, 0.0);
        for (std::size_t i : rows) {
            z[0] = 1;
            for (std::size_t f = 0; f < n_features; ++f) z[f + 1] = (features[i * n_features + f] - m.mean[f]) / m.sd[f];
            double eta = 0;
            for (std::size_t a = 0; a < d; ++a) eta += beta[a] * z[a];
            const double prob = 1.0 / (1.0 + std::exp(-eta)), w = prob * (1 - prob);
            for (std::size_t a = 0; a < d; ++a) {
                grad[a] += (labels[i] - prob) * z[a];
                for (std::size_t b = 0; b < d; ++b) hess[a * d + b] += w * z[a] * z[b];
            }
        }
        for (std::size_t a = 1; a < d; ++a) {
            grad[a] -= l2 * beta[a];
            hess[a * d + a] += l2;
        }
        const std::vector<double> step = solve(hess, grad);
        double change = 0;
        for (std::size_t a = 0; a < d; ++a) {
            beta[a] += step[a];
            change = std::max(change, std::fabs(step[a]));
        }
        if (change < 1e-10) break;
    }
    m.bias = beta[0];
    m.weights.assign(beta.begin() + 1, beta.end());
    return m;
}

double selection_criterion(std::span<const double> scores, std::span<const int> labels,
                           std::span<const std::string> groups, std::span<const char> use, double max_ks) {
    const std::vector<std::string> names = group_list(groups);
    const double worst = worst_auroc(scores, labels, groups, use, names);
    if (std::isnan(worst)) return -2;
    const double ks = max_group_ks(scores, groups, use, names);
    return !std::isnan(ks) && ks > max_ks ? worst - 1 : worst;
}

namespace {

/// Out-of-fold log odds of the logistic combination of the named candidates; empty when no
/// feature is named or one is not among the candidates.
std::vector<double> logistic_out_of_fold(const std::vector<SweepCandidate>& candidates, std::span<const int> labels,
                                         const std::vector<std::size_t>& fold_of, std::size_t k,
                                         const std::vector<std::string>& names, std::vector<double>& features) {
    const std::size_t n = labels.size(), f = names.size();
    if (f == 0) return {};
    features.assign(n * f, nan_value);
    for (std::size_t c = 0; c < f; ++c) {
        const auto it = std::find_if(candidates.begin(), candidates.end(),
                                     [&](const SweepCandidate& cand) { return cand.name == names[c]; });
        if (it == candidates.end()) return {};
        for (std::size_t i = 0; i < n; ++i) features[i * f + c] = it->scores[i];
    }
    std::vector<double> out(n, nan_value);
    for (std::size_t fold = 0; fold < k; ++fold) {
        std::vector<char> train(n);
        for (std::size_t i = 0; i < n; ++i) train[i] = fold_of[i] != fold;
        const LogisticModel model = fit_logistic(features, f, labels, train);
        for (std::size_t i = 0; i < n; ++i)
            if (fold_of[i] == fold) out[i] = model.predict(std::span<const double>(features).subspan(i * f, f));
    }
    return out;
}

CandidateResult evaluate_candidate(const SweepCandidate& c, std::span<const int> labels,
                                   std::span<const std::string> groups, const std::vector<std::string>& names,
                                   const SweepOptions& options) {
    CandidateResult r;
    std::vector<double> s;
    std::vector<int> l;
    std::vector<std::string> all_and_groups{""};
    all_and_groups.insert(all_and_groups.end(), names.begin(), names.end());
    for (const std::string& g : all_and_groups) {
        gather(c.scores, labels, groups, {}, g, s, l);
        GroupResult gr{g.empty() ? "all" : g, auroc(s, l), bootstrap_auroc_ci(s, l, options.bootstrap, options.seed)};
        r.groups.push_back(std::move(gr));
    }
    r.ks = max_group_ks(c.scores, groups, {}, names);
    r.ks_novel = max_group_ks_of_label(c.scores, labels, groups, 1, names);
    r.ks_established = max_group_ks_of_label(c.scores, labels, groups, 0, names);
    r.worst = worst_auroc(c.scores, labels, groups, {}, names);
    return r;
}

}  // namespace

SweepReport evaluate_sweep(std::vector<SweepCandidate>& candidates, std::span<const int> labels,
                           std::span<const std::string> groups, const SweepOptions& options) {
    const std::size_t n = labels.size();
    if (groups.size() != n) throw UsageError("evaluate_sweep: labels and groups differ in length");
    for (const SweepCandidate& c : candidates)
        if (c.scores.size() != n) throw UsageError("evaluate_sweep: candidate " + c.name + " has a score count unlike the labels'");
    SweepReport report;
    const std::vector<std::string> names = group_list(groups);
    report.group_names.push_back("all");
    report.group_names.insert(report.group_names.end(), names.begin(), names.end());
    report.fold_of = stratified_folds(labels, groups, options.folds, options.seed);

    std::vector<double> features;
    std::vector<double> oof = logistic_out_of_fold(candidates, labels, report.fold_of, options.folds,
                                                   options.logistic_features, features);
    if (!oof.empty()) {
        const std::string name = "logistic[" + std::to_string(options.logistic_features.size()) + " features]";
        candidates.push_back({name, "logistic", std::move(oof), false});
        report.logistic_full = fit_logistic(features, options.logistic_features.size(), labels, {});
    }
    for (const SweepCandidate& c : candidates) report.results.push_back(evaluate_candidate(c, labels, groups, names, options));

    std::vector<std::size_t> times_picked(candidates.size(), 0);
    std::vector<double> train_sum(candidates.size(), 0.0);
    for (std::size_t fold = 0; fold < options.folds; ++fold) {
        std::vector<char> train(n), test(n);
        for (std::size_t i = 0; i < n; ++i) {
            train[i] = report.fold_of[i] != fold;
            test[i] = !train[i];
        }
        FoldPick pick;
        pick.train_criterion = -std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < candidates.size(); ++c) {
            if (!candidates[c].selectable) continue;
            const double value = selection_criterion(candidates[c].scores, labels, groups, train, options.max_ks);
            train_sum[c] += value;
            if (value > pick.train_criterion) {
                pick.train_criterion = value;
                pick.candidate = c;
            }
        }
        if (!std::isfinite(pick.train_criterion)) throw UsageError("no selectable candidate to pick a winner from");
        const std::vector<double>& s = candidates[pick.candidate].scores;
        pick.test_worst = worst_auroc(s, labels, groups, test, names);
        std::vector<double> ts;
        std::vector<int> tl;
        gather(s, labels, groups, test, "", ts, tl);
        const Auroc a = auroc(ts, tl);
        pick.test_all = a.value ? *a.value : nan_value;
        ++times_picked[pick.candidate];
        report.picks.push_back(pick);
    }
    report.winner = report.picks.front().candidate;
    for (std::size_t c = 0; c < candidates.size(); ++c)
        if (times_picked[c] > times_picked[report.winner] ||
            (times_picked[c] == times_picked[report.winner] && times_picked[c] > 0 && train_sum[c] > train_sum[report.winner]))
            report.winner = c;
    return report;
}

}  // namespace novelty
