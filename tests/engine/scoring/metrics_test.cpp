// AUROC with ties, its bootstrap interval, and distribution summaries.
#include "novelty/util/error.hpp"
#include "novelty/scoring/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using novelty::auroc;
using novelty::bootstrap_auroc_ci;
using novelty::summarize;

namespace {

constexpr double no_score = std::numeric_limits<double>::quiet_NaN();

/// AUROC by counting every (positive, negative) pair, ties 1/2: the definition.
double pairwise_auroc(const std::vector<double>& s, const std::vector<int>& y) {
    double wins = 0, pairs = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        for (std::size_t j = 0; j < s.size(); ++j) {
            if (y[i] != 1 || y[j] != 0 || std::isnan(s[i]) || std::isnan(s[j])) continue;
            pairs += 1;
            wins += s[i] > s[j] ? 1 : s[i] == s[j] ? 0.5 : 0;
        }
    return wins / pairs;
}

}  // namespace

TEST(Metrics, AurocHandComputedCases) {
    // Pairs (pos, neg): (2,1) 1, (2,2) 1/2, (3,1) 1, (3,2) 1 -> 3.5 / 4.
    const auto ties = auroc(std::vector<double>{1, 2, 2, 3}, std::vector<int>{0, 0, 1, 1});
    ASSERT_TRUE(ties.value);
    EXPECT_DOUBLE_EQ(*ties.value, 0.875);
    EXPECT_EQ(ties.n_pos, 2u);
    EXPECT_EQ(ties.n_neg, 2u);
    EXPECT_TRUE(ties.reason.empty());

    EXPECT_DOUBLE_EQ(*auroc(std::vector<double>{5, 5, 5, 5, 5}, std::vector<int>{0, 1, 0, 1, 1}).value, 0.5);
    EXPECT_DOUBLE_EQ(*auroc(std::vector<double>{0.1, 0.2, 0.8, 0.9}, std::vector<int>{0, 0, 1, 1}).value, 1.0);
    EXPECT_DOUBLE_EQ(*auroc(std::vector<double>{0.1, 0.2, 0.8, 0.9}, std::vector<int>{1, 1, 0, 0}).value, 0.0);
    // Unsorted input: positives {3, 4}, negatives {5, 1, 3.5}: 3 beats 1; 4 beats 1 and 3.5 -> 3 / 6.
    EXPECT_DOUBLE_EQ(*auroc(std::vector<double>{5, 3, 1, 4, 3.5}, std::vector<int>{0, 1, 0, 1, 0}).value, 0.5);
}

TEST(Metrics, AurocMatchesPairCountingWithManyTies) {
    std::vector<double> s;
    std::vector<int> y;
    for (int i = 0; i < 200; ++i) {
        s.push_back(static_cast<double>((i * 37) % 11));  // 11 distinct values, heavy ties
        y.push_back((i * 13) % 7 < 3 ? 1 : 0);
    }
    EXPECT_NEAR(*auroc(s, y).value, pairwise_auroc(s, y), 1e-12);
}

TEST(Metrics, NullScoresAreLeftOut) {
    const std::vector<double> s{1, no_score, 2, 2, no_score, 3};
    const std::vector<int> y{0, 1, 0, 1, 0, 1};
    const auto r = auroc(s, y);
    EXPECT_EQ(r.n_missing, 2u);
    EXPECT_EQ(r.n_pos, 2u);
    EXPECT_EQ(r.n_neg, 2u);
    EXPECT_DOUBLE_EQ(*r.value, 0.875);
}

TEST(Metrics, NoPositivesOrNegativesHasNoValue) {
    const auto no_pos = auroc(std::vector<double>{1, 2}, std::vector<int>{0, 0});
    EXPECT_FALSE(no_pos.value);
    EXPECT_EQ(no_pos.reason, "no positives");
    const auto no_neg = auroc(std::vector<double>{1, no_score}, std::vector<int>{1, 0});
    EXPECT_FALSE(no_neg.value);
    EXPECT_EQ(no_neg.reason, "no negatives");
    EXPECT_EQ(no_neg.n_missing, 1u);
    const auto empty = auroc(std::vector<double>{}, std::vector<int>{});
    EXPECT_FALSE(empty.value);
    EXPECT_EQ(empty.reason, "no positives and no negatives");
    EXPECT_EQ(auroc(std::vector<double>{no_score}, std::vector<int>{1}).reason, "no scores");
    EXPECT_FALSE(bootstrap_auroc_ci(std::vector<double>{1, 2}, std::vector<int>{0, 0}, 100, 1));
}

TEST(Metrics, BadInputsThrow) {
    EXPECT_THROW(auroc(std::vector<double>{1, 2}, std::vector<int>{0}), novelty::UsageError);
    EXPECT_THROW(auroc(std::vector<double>{1, 2}, std::vector<int>{0, 2}), novelty::UsageError);
    EXPECT_THROW(bootstrap_auroc_ci(std::vector<double>{1, 2}, std::vector<int>{0, 1}, 10, 1, 1.5), novelty::UsageError);
}

TEST(Metrics, BootstrapIntervalContainsEstimateAndIsDeterministic) {
    std::vector<double> s;
    std::vector<int> y;
    for (int i = 0; i < 120; ++i) {
        y.push_back(i % 3 == 0 ? 1 : 0);
        s.push_back(static_cast<double>((i * 29) % 50) + (y.back() ? 12.0 : 0.0));
    }
    const double point = *auroc(s, y).value;
    const auto a = bootstrap_auroc_ci(s, y, 1000, 7);
    ASSERT_TRUE(a);
    EXPECT_LE(a->lo, point);
    EXPECT_GE(a->hi, point);
    EXPECT_LT(a->lo, a->hi);
    EXPECT_GE(a->lo, 0.0);
    EXPECT_LE(a->hi, 1.0);
    const auto b = bootstrap_auroc_ci(s, y, 1000, 7);
    EXPECT_EQ(a->lo, b->lo);
    EXPECT_EQ(a->hi, b->hi);
    const auto c = bootstrap_auroc_ci(s, y, 1000, 8);
    EXPECT_TRUE(c->lo != a->lo || c->hi != a->hi);
    // A narrower level gives a narrower interval from the same replicates.
    const auto narrow = bootstrap_auroc_ci(s, y, 1000, 7, 0.5);
    EXPECT_GE(narrow->lo, a->lo);
    EXPECT_LE(narrow->hi, a->hi);
    EXPECT_FALSE(bootstrap_auroc_ci(s, y, 0, 7));
}

TEST(Metrics, BootstrapOfSeparatedOrTiedScoresIsDegenerate) {
    // Stratified resampling keeps both classes in every replicate, so perfect separation stays 1.
    const auto perfect = bootstrap_auroc_ci(std::vector<double>{1, 2, 3, 4}, std::vector<int>{0, 0, 1, 1}, 200, 3);
    EXPECT_DOUBLE_EQ(perfect->lo, 1.0);
    EXPECT_DOUBLE_EQ(perfect->hi, 1.0);
    const auto tied = bootstrap_auroc_ci(std::vector<double>{2, 2, 2, 2}, std::vector<int>{0, 1, 0, 1}, 200, 3);
    EXPECT_DOUBLE_EQ(tied->lo, 0.5);
    EXPECT_DOUBLE_EQ(tied->hi, 0.5);
}

TEST(Metrics, DistributionOfAKnownSet) {
    const auto d = summarize(std::vector<double>{7, 1, no_score, 10, 4, 2, 9, 3, 6, 5, 8});
    EXPECT_EQ(d.n, 10u);
    EXPECT_EQ(d.n_missing, 1u);
    EXPECT_DOUBLE_EQ(d.mean, 5.5);
    EXPECT_NEAR(d.sd, std::sqrt(82.5 / 9), 1e-12);
    EXPECT_DOUBLE_EQ(d.min, 1);
    EXPECT_DOUBLE_EQ(d.q1, 3.25);  // position 0.25 * 9 = 2.25 between 3 and 4
    EXPECT_DOUBLE_EQ(d.median, 5.5);
    EXPECT_DOUBLE_EQ(d.q3, 7.75);
    EXPECT_DOUBLE_EQ(d.max, 10);

    const auto one = summarize(std::vector<double>{3});
    EXPECT_EQ(one.n, 1u);
    EXPECT_DOUBLE_EQ(one.sd, 0);
    EXPECT_DOUBLE_EQ(one.q1, 3);
    EXPECT_DOUBLE_EQ(one.q3, 3);

    const auto none = summarize(std::vector<double>{no_score});
    EXPECT_EQ(none.n, 0u);
    EXPECT_TRUE(std::isnan(none.mean));
    EXPECT_TRUE(std::isnan(none.median));
}

TEST(Metrics, QuantileInterpolates) {
    const std::vector<double> v{10, 20, 30, 40};
    EXPECT_DOUBLE_EQ(novelty::quantile(v, 0), 10);
    EXPECT_DOUBLE_EQ(novelty::quantile(v, 1), 40);
    EXPECT_DOUBLE_EQ(novelty::quantile(v, 0.5), 25);
    EXPECT_DOUBLE_EQ(novelty::quantile(v, 0.025), 10.75);
    EXPECT_TRUE(std::isnan(novelty::quantile(std::vector<double>{}, 0.5)));
}
