// The statistics of `novelty eval sweep` on hand-computed cases: AUROC and bootstrap intervals
// per group, the KS statistic, ranks, folds, the logistic fit and the choice of the winner.
#include "novelty/util/error.hpp"
#include "scoring/score_sweep.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

using namespace novelty;

TEST(SweepStats, KsStatisticOnHandCases) {
    EXPECT_DOUBLE_EQ(ks_statistic(std::vector<double>{1, 2, 3}, std::vector<double>{1, 2, 3}), 0.0);
    EXPECT_DOUBLE_EQ(ks_statistic(std::vector<double>{1, 2}, std::vector<double>{3, 4}), 1.0);
    // a = {1, 2, 3, 4}, b = {3, 4, 5, 6}: after 2, F_a = 1/2 and F_b = 0.
    EXPECT_DOUBLE_EQ(ks_statistic(std::vector<double>{1, 2, 3, 4}, std::vector<double>{3, 4, 5, 6}), 0.5);
    // Ties across the samples are stepped together: {1, 1} vs {1, 2} differ by 1/2 after 1.
    EXPECT_DOUBLE_EQ(ks_statistic(std::vector<double>{1, 1}, std::vector<double>{1, 2}), 0.5);
    EXPECT_DOUBLE_EQ(ks_statistic(std::vector<double>{1, NAN}, std::vector<double>{1}), 0.0);
    EXPECT_TRUE(std::isnan(ks_statistic(std::vector<double>{}, std::vector<double>{1})));
}

TEST(SweepStats, AverageRanksShareTies) {
    const auto r = average_ranks(std::vector<double>{10, 30, 20, 30, NAN});
    EXPECT_DOUBLE_EQ(r[0], 1);
    EXPECT_DOUBLE_EQ(r[2], 2);
    EXPECT_DOUBLE_EQ(r[1], 3.5);
    EXPECT_DOUBLE_EQ(r[3], 3.5);
    EXPECT_TRUE(std::isnan(r[4]));
}

TEST(SweepStats, FoldsAreStratifiedAndSeeded) {
    std::vector<int> labels;
    std::vector<std::string> groups;
    for (int i = 0; i < 40; ++i) {
        labels.push_back(i % 2);
        groups.push_back(i < 20 ? "a" : "b");
    }
    const auto folds = stratified_folds(labels, groups, 5, 3);
    std::map<std::tuple<std::size_t, std::string, int>, int> count;
    for (std::size_t i = 0; i < folds.size(); ++i) {
        ASSERT_LT(folds[i], 5u);
        ++count[{folds[i], groups[i], labels[i]}];
    }
    for (const auto& [key, c] : count) EXPECT_EQ(c, 2);  // each stratum of 10 dealt 2 per fold
    EXPECT_EQ(folds, stratified_folds(labels, groups, 5, 3));
    EXPECT_NE(folds, stratified_folds(labels, groups, 5, 4));
    EXPECT_THROW(stratified_folds(labels, groups, 1, 3), UsageError);
}

TEST(SweepStats, LogisticFitMatchesTheClosedForm) {
    // One feature taking two values, x = 0 (1 of 4 positive) and x = 1 (3 of 4 positive): without
    // a penalty the fit reproduces both rates, log odds -log 3 and +log 3.
    std::vector<double> x{0, 0, 0, 0, 1, 1, 1, 1};
    std::vector<int> y{1, 0, 0, 0, 1, 1, 1, 0};
    const LogisticModel m = fit_logistic(x, 1, y, {}, 0.0);
    EXPECT_NEAR(m.predict(std::vector<double>{0}), -std::log(3.0), 1e-9);
    EXPECT_NEAR(m.predict(std::vector<double>{1}), std::log(3.0), 1e-9);
    EXPECT_NEAR(m.mean[0], 0.5, 1e-12);
    EXPECT_NEAR(m.sd[0], 0.5, 1e-12);
    // Rows left out by `use` do not count; with no negative left the fit is refused.
    std::vector<char> use{1, 0, 0, 0, 1, 1, 1, 0};
    EXPECT_THROW(fit_logistic(x, 1, y, use, 0.0), UsageError);
}

TEST(SweepStats, AurocIntervalsAndKsPerGroup) {
    // Group a: positives score {3, 1}, negatives {2, 0}: 3 of 4 pairs ordered, AUROC 0.75.
    // Group b: perfectly separated, AUROC 1 with a bootstrap interval of [1, 1].
    // Mixed: a's positives {3, 1}, b's {13, 12}; negatives {2, 0, 11, 10}: 2 + 1 + 4 + 4 of 16 = 11/16.
    std::vector<SweepCandidate> candidates{{"score", "test", {3, 1, 2, 0, 13, 12, 11, 10}, true},
                                           {"constant", "test", {5, 5, 5, 5, 5, 5, 5, 5}, true}};
    const std::vector<int> labels{1, 1, 0, 0, 1, 1, 0, 0};
    const std::vector<std::string> groups{"a", "a", "a", "a", "b", "b", "b", "b"};
    SweepOptions options;
    options.bootstrap = 300;
    options.folds = 2;
    options.logistic_features.clear();  // no logistic candidate
    const SweepReport report = evaluate_sweep(candidates, labels, groups, options);
    ASSERT_EQ(report.group_names, (std::vector<std::string>{"all", "a", "b"}));
    ASSERT_EQ(report.results.size(), 2u);
    const CandidateResult& r = report.results[0];
    EXPECT_DOUBLE_EQ(*r.groups[0].auroc.value, 11.0 / 16.0);
    EXPECT_DOUBLE_EQ(*r.groups[1].auroc.value, 0.75);
    EXPECT_DOUBLE_EQ(*r.groups[2].auroc.value, 1.0);
    EXPECT_DOUBLE_EQ(r.groups[2].ci->lo, 1.0);
    EXPECT_DOUBLE_EQ(r.groups[2].ci->hi, 1.0);
    EXPECT_LE(r.groups[1].ci->lo, 0.75);
    EXPECT_GE(r.groups[1].ci->hi, 0.75);
    EXPECT_DOUBLE_EQ(r.worst, 11.0 / 16.0);
    EXPECT_DOUBLE_EQ(r.ks, 1.0);  // the groups' scores do not overlap
    EXPECT_DOUBLE_EQ(r.ks_novel, 1.0);
    EXPECT_DOUBLE_EQ(r.ks_established, 1.0);
    // A constant score: every pair tied, AUROC 1/2 everywhere, interval [1/2, 1/2], KS 0.
    const CandidateResult& c = report.results[1];
    for (const GroupResult& g : c.groups) {
        EXPECT_DOUBLE_EQ(*g.auroc.value, 0.5);
        EXPECT_DOUBLE_EQ(g.ci->lo, 0.5);
        EXPECT_DOUBLE_EQ(g.ci->hi, 0.5);
    }
    EXPECT_DOUBLE_EQ(c.ks, 0.0);
    EXPECT_DOUBLE_EQ(c.ks_novel, 0.0);
    EXPECT_DOUBLE_EQ(c.ks_established, 0.0);
}

TEST(SweepStats, KsWithinEachLabel) {
    // Group a: novel {1, 2}, established {0, 0}; group b: novel {1, 2}, established {5, 6}.
    // Among the novel ideas the groups agree (KS 0); among the established ones they do not
    // overlap (KS 1). Over all ideas, a = {0, 0, 1, 2} and b = {1, 2, 5, 6}: at x = 0, 1 and 2
    // F_a - F_b = 1/2, at x = 5 1/4: KS 1/2.
    std::vector<SweepCandidate> candidates{{"score", "test", {1, 2, 0, 0, 1, 2, 5, 6}, true}};
    const std::vector<int> labels{1, 1, 0, 0, 1, 1, 0, 0};
    const std::vector<std::string> groups{"a", "a", "a", "a", "b", "b", "b", "b"};
    SweepOptions options;
    options.bootstrap = 10;
    options.folds = 2;
    options.logistic_features.clear();
    const CandidateResult r = evaluate_sweep(candidates, labels, groups, options).results[0];
    EXPECT_DOUBLE_EQ(r.ks, 0.5);
    EXPECT_DOUBLE_EQ(r.ks_novel, 0.0);
    EXPECT_DOUBLE_EQ(r.ks_established, 1.0);

    // Group b without an established idea: no pair of groups to compare among those (NaN).
    std::vector<SweepCandidate> one_sided{{"score", "test", {1, 2, 0, 0, 3, 4}, true}};
    const std::vector<int> labels2{1, 1, 0, 0, 1, 1};
    const std::vector<std::string> groups2{"a", "a", "a", "a", "b", "b"};
    const CandidateResult s = evaluate_sweep(one_sided, labels2, groups2, options).results[0];
    EXPECT_DOUBLE_EQ(s.ks_novel, 1.0);
    EXPECT_TRUE(std::isnan(s.ks_established));
}

TEST(SweepStats, WinnerIsChosenOnTrainingFoldsOnly) {
    // 60 ideas in two groups; "good" orders every group perfectly and keeps the groups' scores
    // alike; "shifted" is as good within each group but its groups' scores do not overlap (KS 1),
    // so it ranks after every candidate within max_ks; "noise" is unrelated to the labels.
    std::vector<int> labels;
    std::vector<std::string> groups;
    std::vector<double> good, shifted, noise;
    for (int i = 0; i < 60; ++i) {
        const int label = i % 2;
        const bool b = i >= 30;
        labels.push_back(label);
        groups.push_back(b ? "b" : "a");
        good.push_back(label * 10 + (i % 7));
        shifted.push_back(label * 10 + (i % 7) + (b ? 100 : 0));
        noise.push_back((i * 37) % 11);
    }
    std::vector<SweepCandidate> candidates{{"noise", "t", noise, true}, {"shifted", "t", shifted, true},
                                           {"good", "t", good, true}, {"batch", "t", good, false}};
    SweepOptions options;
    options.bootstrap = 0;
    options.folds = 3;
    options.max_ks = 0.3;  // "good" stays within it on any training folds, "shifted" never does
    options.logistic_features = {"noise", "good"};
    const SweepReport report = evaluate_sweep(candidates, labels, groups, options);
    ASSERT_EQ(report.picks.size(), 3u);
    for (const FoldPick& pick : report.picks) {
        EXPECT_EQ(candidates[pick.candidate].name, "good");  // never "batch": not selectable
        EXPECT_DOUBLE_EQ(pick.test_all, 1.0);
    }
    EXPECT_EQ(candidates[report.winner].name, "good");
    // The logistic combination is appended with out-of-fold scores, and is never the winner.
    ASSERT_EQ(candidates.size(), 5u);
    EXPECT_EQ(candidates.back().family, "logistic");
    EXPECT_FALSE(candidates.back().selectable);
    EXPECT_GT(*report.results.back().groups[0].auroc.value, 0.9);
    ASSERT_TRUE(report.logistic_full.has_value());
    EXPECT_GT(report.logistic_full->weights[1], 0);
    // The criterion penalises KS above max_ks by 1.
    const std::vector<char> all(60, 1);
    // "shifted": perfect within each group, 3/4 mixed (a's positives fall below b's negatives).
    EXPECT_DOUBLE_EQ(selection_criterion(good, labels, groups, all, 0.1), 1.0);
    EXPECT_DOUBLE_EQ(selection_criterion(shifted, labels, groups, all, 0.1), 0.75 - 1);
    EXPECT_DOUBLE_EQ(selection_criterion(shifted, labels, groups, all, 1.0), 0.75);
}
