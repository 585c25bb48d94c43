// The paired bootstrap of AUROC(a) - AUROC(b): hand-computed cases, a brute-force reference that
// redraws the same resamples, and the per-group comparisons of the sweep.
#include "novelty/scoring/metrics.hpp"
#include "scoring/score_sweep.hpp"
#include "novelty/util/error.hpp"
#include "scoring/split_mix64.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using novelty::paired_auroc_difference;

namespace {

constexpr double no_score = std::numeric_limits<double>::quiet_NaN();

/// AUROC of the items counted w[i] times, by every (positive, negative) pair, ties 1/2.
double pairwise_auroc(const std::vector<double>& s, const std::vector<int>& y, const std::vector<int>& w) {
    double wins = 0, pairs = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        for (std::size_t j = 0; j < s.size(); ++j) {
            if (y[i] != 1 || y[j] != 0) continue;
            const double n = static_cast<double>(w[i]) * w[j];
            pairs += n;
            wins += n * (s[i] > s[j] ? 1 : s[i] == s[j] ? 0.5 : 0);
        }
    return wins / pairs;
}

TEST(PairedBootstrap, HandComputedValueWithTiesAndMissingScores) {
    // a: p1 0.9 beats both negatives, p2 0.5 ties n1 (1/2) and beats n2: 3.5 / 4.
    // b: p1 0.1 beats none, p2 0.9 beats both: 2 / 4. The fifth item has no b score: left out.
    const std::vector<double> a{0.9, 0.5, 0.5, 0.1, 0.3}, b{0.1, 0.9, 0.5, 0.2, no_score};
    const std::vector<int> y{1, 1, 0, 0, 0};
    const auto d = paired_auroc_difference(a, b, y, 0, 1);
    ASSERT_TRUE(d);
    EXPECT_DOUBLE_EQ(d->value, 0.875 - 0.5);
    EXPECT_FALSE(d->ci);
    EXPECT_TRUE(std::isnan(d->share_not_above));
    EXPECT_EQ(d->n_pos, 2u);
    EXPECT_EQ(d->n_neg, 2u);
    EXPECT_EQ(d->n_missing, 1u);
}

TEST(PairedBootstrap, ConstantDifferencesGiveDegenerateIntervals) {
    const std::vector<double> perfect{0.9, 0.8, 0.7, 0.2, 0.1}, flat{1, 1, 1, 1, 1};
    const std::vector<int> y{1, 1, 1, 0, 0};
    // Every resample: the perfect score 1, the flat one 1/2; a score against itself 0.
    const auto d = paired_auroc_difference(perfect, flat, y, 500, 7);
    ASSERT_TRUE(d && d->ci);
    EXPECT_DOUBLE_EQ(d->value, 0.5);
    EXPECT_DOUBLE_EQ(d->ci->lo, 0.5);
    EXPECT_DOUBLE_EQ(d->ci->hi, 0.5);
    EXPECT_DOUBLE_EQ(d->share_not_above, 0.0);
    const auto same = paired_auroc_difference(perfect, perfect, y, 500, 7);
    ASSERT_TRUE(same && same->ci);
    EXPECT_DOUBLE_EQ(same->ci->lo, 0.0);
    EXPECT_DOUBLE_EQ(same->ci->hi, 0.0);
    EXPECT_DOUBLE_EQ(same->share_not_above, 1.0);
}

TEST(PairedBootstrap, ResamplesArePairedOnOnePositiveAndTwoNegatives) {
    // One positive between two negatives; a and b order the negatives the other way round. A
    // resample of the negatives is {n1, n1} (1/4: a 1, b 0), {n2, n2} (1/4: a 0, b 1) or one of
    // each (1/2: both 1/2), so the difference is +1, -1 or 0 with 1/4, 1/4, 1/2 and the share
    // <= 0 is 3/4. Drawn independently for a and b it would be 11/16.
    const std::vector<double> a{2, 1, 3}, b{2, 3, 1};
    const std::vector<int> y{1, 0, 0};
    const auto d = paired_auroc_difference(a, b, y, 4000, 3);
    ASSERT_TRUE(d && d->ci);
    EXPECT_DOUBLE_EQ(d->value, 0.0);
    EXPECT_DOUBLE_EQ(d->ci->lo, -1.0);
    EXPECT_DOUBLE_EQ(d->ci->hi, 1.0);
    EXPECT_NEAR(d->share_not_above, 0.75, 0.025);
}

TEST(PairedBootstrap, MatchesABruteForceReferenceOnRandomData) {
    std::mt19937 gen(11);
    std::normal_distribution<double> noise;
    const std::size_t n = 60;
    std::vector<double> a(n), b(n);
    std::vector<int> y(n);
    for (std::size_t i = 0; i < n; ++i) {
        y[i] = i % 3 == 0;
        a[i] = y[i] + noise(gen);
        b[i] = std::round(2 * (0.5 * y[i] + noise(gen))) / 2;  // coarse: many ties
    }
    const std::size_t replicates = 300;
    const auto d = paired_auroc_difference(a, b, y, replicates, 42, 0.9);
    ASSERT_TRUE(d && d->ci);
    const std::vector<int> ones(n, 1);
    EXPECT_NEAR(d->value, pairwise_auroc(a, y, ones) - pairwise_auroc(b, y, ones), 1e-12);
    // The same draws: positives then negatives, each in item order, with the built-in generator.
    std::vector<std::size_t> pos, neg;
    for (std::size_t i = 0; i < n; ++i) (y[i] ? pos : neg).push_back(i);
    novelty::detail::SplitMix64 rng(42);
    std::vector<double> diffs;
    std::size_t not_above = 0;
    for (std::size_t r = 0; r < replicates; ++r) {
        std::vector<int> w(n, 0);
        for (std::size_t k = 0; k < pos.size(); ++k) ++w[pos[rng.below(pos.size())]];
        for (std::size_t k = 0; k < neg.size(); ++k) ++w[neg[rng.below(neg.size())]];
        diffs.push_back(pairwise_auroc(a, y, w) - pairwise_auroc(b, y, w));
        not_above += diffs.back() <= 1e-12;
    }
    std::sort(diffs.begin(), diffs.end());
    EXPECT_NEAR(d->ci->lo, novelty::quantile(diffs, 0.05), 1e-12);
    EXPECT_NEAR(d->ci->hi, novelty::quantile(diffs, 0.95), 1e-12);
    EXPECT_DOUBLE_EQ(d->share_not_above, static_cast<double>(not_above) / replicates);
    EXPECT_LT(d->ci->lo, d->ci->hi);
}

TEST(PairedBootstrap, EmptyClassesAndBadInput) {
    EXPECT_FALSE(paired_auroc_difference(std::vector<double>{1, 2}, std::vector<double>{1, 2}, std::vector<int>{1, 1}, 10, 1));
    EXPECT_FALSE(paired_auroc_difference(std::vector<double>{1, 2}, std::vector<double>{1, no_score},
                                         std::vector<int>{1, 0}, 10, 1));
    EXPECT_THROW(paired_auroc_difference(std::vector<double>{1, 2}, std::vector<double>{1}, std::vector<int>{1, 0}, 10, 1),
                 novelty::UsageError);
    EXPECT_THROW(paired_auroc_difference(std::vector<double>{1, 2}, std::vector<double>{1, 2}, std::vector<int>{1, 2}, 10, 1),
                 novelty::UsageError);
    EXPECT_THROW(paired_auroc_difference(std::vector<double>{1, 2}, std::vector<double>{1, 2}, std::vector<int>{1, 0}, 10, 1, 1.0),
                 novelty::UsageError);
}

TEST(PairedBootstrap, SweepComparisonsPerGroupAndPairParsing) {
    const auto pairs = novelty::parse_variant_pairs("rnd[cos,P=500,Q=5]:hd[n=5], mean[rnd,rel_hd][P=200] : hd[n=5]");
    ASSERT_EQ(pairs.size(), 2u);
    EXPECT_EQ(pairs[0].first, "rnd[cos,P=500,Q=5]");
    EXPECT_EQ(pairs[0].second, "hd[n=5]");
    EXPECT_EQ(pairs[1].first, "mean[rnd,rel_hd][P=200]");
    EXPECT_TRUE(novelty::parse_variant_pairs("").empty());
    EXPECT_THROW(novelty::parse_variant_pairs("hd[n=5]"), novelty::UsageError);
    EXPECT_THROW(novelty::parse_variant_pairs("a:b:c"), novelty::UsageError);
    EXPECT_THROW(novelty::parse_variant_pairs("a:"), novelty::UsageError);

    // Group x: a perfect, b flat (+0.5); group z: a and b the same (0); all: computed directly.
    const std::vector<int> y{1, 0, 1, 0, 1, 0};
    const std::vector<std::string> g{"x", "x", "z", "z", "z", "z"};
    std::vector<novelty::SweepCandidate> c{{"a", "t", {0.9, 0.1, 0.6, 0.4, 0.2, 0.3}, true},
                                           {"b", "t", {0.5, 0.5, 0.6, 0.4, 0.2, 0.3}, true}};
    novelty::SweepOptions options;
    options.bootstrap = 50;
    const auto cmp = novelty::paired_comparisons(c, y, g, {{"a", "b"}}, options);
    ASSERT_EQ(cmp.size(), 1u);
    ASSERT_EQ(cmp[0].groups, (std::vector<std::string>{"all", "x", "z"}));
    const auto all = paired_auroc_difference(c[0].scores, c[1].scores, y, 50, options.seed);
    EXPECT_DOUBLE_EQ(cmp[0].result[0]->value, all->value);
    EXPECT_DOUBLE_EQ(cmp[0].result[0]->ci->lo, all->ci->lo);
    EXPECT_DOUBLE_EQ(cmp[0].result[1]->value, 0.5);
    EXPECT_DOUBLE_EQ(cmp[0].result[2]->value, 0.0);
    EXPECT_DOUBLE_EQ(cmp[0].result[2]->ci->hi, 0.0);
    try {
        novelty::paired_comparisons(c, y, g, {{"a", "nope"}}, options);
        FAIL() << "an unknown name must throw";
    } catch (const novelty::UsageError& e) {
        EXPECT_EQ(e.parameter(), "paired");
        EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
    }
}

}  // namespace
