// plan_densities: which prefixes a batch's missing densities are cheaper to self-join than to
// search, with the segment rule (a row is searched once up to its largest missing limit).
#include "scoring/density_plan.hpp"

#include <gtest/gtest.h>

using namespace novelty;

namespace {

std::vector<MissingDensity> rows_at(std::size_t first, std::size_t n, std::size_t limit) {
    std::vector<MissingDensity> missing;
    for (std::size_t r = first; r < first + n; ++r) missing.push_back({r, limit});
    return missing;
}

}  // namespace

TEST(DensityPlan, FewRowsAreSearchedAndMostRowsJoined) {
    // One prefix of 1,000 rows, pair weight 1.6: the join weighs 1.6 x 1000 x 999 / 2 = 799,200; searching D rows
    // scans D x 1,000. The crossing point is D = 800.
    const DensityPlan few = plan_densities(rows_at(0, 100, 1000), 1.6);
    EXPECT_TRUE(few.joins.empty());
    EXPECT_EQ(few.missing, 100u);
    EXPECT_EQ(few.summary(), "on demand (100 lists searched)");
    const DensityPlan most = plan_densities(rows_at(0, 900, 1000), 1.6);
    ASSERT_EQ(most.joins.size(), 1u);
    EXPECT_EQ(most.joins[0].prefix, 1000u);
    EXPECT_EQ(most.joins[0].rows_reached, 900u);
    EXPECT_DOUBLE_EQ(most.joins[0].search_cost, 900.0 * 1000.0);
    EXPECT_EQ(most.summary(), "self-join of 1,000 rows (900 reached)");
    EXPECT_TRUE(plan_densities(rows_at(0, 799, 1000), 1.6).joins.empty());
    EXPECT_EQ(plan_densities(rows_at(0, 800, 1000), 1.6).joins.size(), 1u);
}

TEST(DensityPlan, DuplicatesCountOnceAndTheWeightMovesTheCrossing) {
    std::vector<MissingDensity> twice = rows_at(0, 500, 1000);
    const std::vector<MissingDensity> again = rows_at(0, 500, 1000);
    twice.insert(twice.end(), again.begin(), again.end());
    EXPECT_TRUE(plan_densities(twice, 1.6).joins.empty()) << "500 distinct rows, not 1,000";
    EXPECT_EQ(plan_densities(twice, 1.6).missing, 500u);
    EXPECT_EQ(plan_densities(twice, 0.5).joins.size(), 1u) << "a cheaper join crosses earlier";
}

TEST(DensityPlan, ARowSearchedBeyondAPrefixSavesNothingThereAndLowerLimitsOnlyTheirSegment) {
    // Pair weight 1.6. 900 rows missing at 1,000 and at 2,000. Joining 2,000 (1.6 x 2000 x 1999 / 2 = 3.2M)
    // saves each row only the segment [1000, 2000): 900,000, so it is not joined; then 1,000
    // is weighed with every row still searched to 2,000: nothing saved, not joined either.
    std::vector<MissingDensity> two = rows_at(0, 900, 1000);
    const std::vector<MissingDensity> upper = rows_at(0, 900, 2000);
    two.insert(two.end(), upper.begin(), upper.end());
    const DensityPlan plan = plan_densities(two, 1.6);
    EXPECT_TRUE(plan.joins.empty());
    EXPECT_EQ(plan.prefixes, 2u);
    EXPECT_DOUBLE_EQ(plan.search_cost, 900.0 * 2000.0) << "each row scanned once, up to its largest limit";
    // With pair weight 1: 1,900 rows at 2,000 (900 of them also at 1,000) save 900 x 1,000 +
    // 1,000 x 2,000 = 2.9M > 1,999,000, so 2,000 is joined; the 900 rows at 1,000 then save
    // their whole prefix, 900,000 > 499,500, so 1,000 is joined too.
    std::vector<MissingDensity> mixed = rows_at(0, 900, 1000);
    const std::vector<MissingDensity> most = rows_at(0, 1900, 2000);
    mixed.insert(mixed.end(), most.begin(), most.end());
    const DensityPlan both = plan_densities(mixed, 1.0);
    ASSERT_EQ(both.joins.size(), 2u);
    EXPECT_EQ(both.joins[0].prefix, 2000u);
    EXPECT_DOUBLE_EQ(both.joins[0].search_cost, 900.0 * 1000.0 + 1000.0 * 2000.0);
    EXPECT_EQ(both.joins[1].prefix, 1000u);
    EXPECT_DOUBLE_EQ(both.joins[1].search_cost, 900.0 * 1000.0);
    EXPECT_EQ(both.summary(), "self-join of 2,000 rows (1,900 reached) + self-join of 1,000 rows (900 reached)");
}

TEST(DensityPlan, NothingMissingIsServedFromTheStore) {
    const DensityPlan plan = plan_densities({});
    EXPECT_TRUE(plan.joins.empty());
    EXPECT_EQ(plan.summary(), "from the store");
}
