// ClaimNov maths against hand-computed values: k_d, e, a(c), N(P), the rule, one claim per paper,
// and the evaluation metrics reproducing the paper's ClaimNov row.
#include "novelty/claimnov/claim_index.hpp"
#include "novelty/claimnov/claimnov.hpp"
#include "novelty/claimnov/claimnov_eval.hpp"
#include "novelty/util/error.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace novelty;

TEST(ClaimNov, RetrievalDepthIsClampedToTenAndForty) {
    EXPECT_EQ(retrieval_depth(0), 10u);
    EXPECT_EQ(retrieval_depth(49), 10u);   // round(9.8) = 10
    EXPECT_EQ(retrieval_depth(57), 11u);   // round(11.4) = 11
    EXPECT_EQ(retrieval_depth(58), 12u);   // round(11.6) = 12
    EXPECT_EQ(retrieval_depth(62), 12u);   // round(12.4)
    EXPECT_EQ(retrieval_depth(63), 13u);   // round(12.6)
    EXPECT_EQ(retrieval_depth(200), 40u);
    EXPECT_EQ(retrieval_depth(1000000), 40u);
}

TEST(ClaimNov, EntailmentLevelsMapToQuarters) {
    EXPECT_DOUBLE_EQ(entailment_score(1), 0.0);
    EXPECT_DOUBLE_EQ(entailment_score(3), 0.5);
    EXPECT_DOUBLE_EQ(entailment_score(5), 1.0);
    EXPECT_THROW(entailment_score(0), UsageError);
    EXPECT_THROW(entailment_score(6), UsageError);
}

TEST(ClaimNov, AnticipationIsTheRankDiscountedMeanOfSortedScores) {
    // e = {0.5, 1, 0.25} sorted {1, 0.5, 0.25}: (1 + 0.25 + 0.0625) / (1 + 0.5 + 0.25) = 1.3125 / 1.75 = 0.75
    EXPECT_DOUBLE_EQ(claim_anticipation({0.5, 1.0, 0.25}), 0.75);
    EXPECT_DOUBLE_EQ(claim_anticipation({1.0}), 1.0);
    EXPECT_DOUBLE_EQ(claim_anticipation({}), 0.0);
    // alpha = 1 is the plain mean.
    EXPECT_DOUBLE_EQ(claim_anticipation({0.0, 1.0}, 1.0), 0.5);
    // One full match among zeros still counts: (1) / (1 + .5 + .25 + .125) = 0.5333...
    EXPECT_NEAR(claim_anticipation({0, 0, 1, 0}), 1.0 / 1.875, 1e-12);
    EXPECT_THROW(claim_anticipation({1.5}), UsageError);
}

TEST(ClaimNov, SignalsCountStrongMatches) {
    const ClaimSignals s = claim_signals({5, 2, 4, 1});
    EXPECT_EQ(s.n_strong, 2u);
    EXPECT_DOUBLE_EQ(s.max_e, 1.0);
    // sorted e {1, .75, .25, 0}: (1 + .375 + .0625) / 1.875 = 0.766666...
    EXPECT_NEAR(s.anticipation, 1.4375 / 1.875, 1e-12);
}

TEST(ClaimNov, ProposalNoveltyWeighsDimensions) {
    // problem (0.4) a=1, result (0.3) a=0.5, methodology (0.2) a=0, resource (0.1) a=0
    // A = 0.4 + 0.15 = 0.55, A_max = 1.0, N = 0.45
    const std::vector<ScoredClaim> claims = {{ClaimDimension::problem, 1, 1.0},
                                             {ClaimDimension::result, 1, 0.5},
                                             {ClaimDimension::methodology, 1, 0.0},
                                             {ClaimDimension::resource, 1, 0.0}};
    const ProposalNovelty n = proposal_novelty(claims, {true, false, false, false});
    EXPECT_NEAR(n.anticipated, 0.55, 1e-12);
    EXPECT_NEAR(n.anticipated_max, 1.0, 1e-12);
    EXPECT_NEAR(n.novelty, 0.45, 1e-12);
    EXPECT_DOUBLE_EQ(n.max_anticipation, 1.0);
    EXPECT_DOUBLE_EQ(n.breadth, 0.25);
    // Importance scales a claim's weight: methodology with imp 2 (0.4) a=1 and resource (0.1) a=0 -> N = 0.1/0.5 = 0.2
    const ProposalNovelty m = proposal_novelty({{ClaimDimension::methodology, 2, 1.0}, {ClaimDimension::resource, 1, 0.0}});
    EXPECT_NEAR(m.novelty, 0.2, 1e-12);
    EXPECT_DOUBLE_EQ(proposal_novelty({}).novelty, 1.0);
}

TEST(ClaimNov, RuleFailsOnLowScoreWithAStrongMatchAndNamesTheHeaviestPaper) {
    const std::vector<ScoredClaim> claims = {{ClaimDimension::problem, 1, 0.9}, {ClaimDimension::resource, 1, 0.9}};
    // Paper A strongly matches the resource claim (weight 0.1) twice; paper B the problem claim (0.4) once.
    const std::vector<std::vector<RuleCandidate>> candidates = {{{"B", 4, 0.7}, {"A", 2, 0.9}},
                                                                {{"A", 5, 0.9}, {"A", 5, 0.8}, {"B", 1, 0.1}}};
    RuleVerdict v = rule_verdict(claims, candidates, 0.1);
    EXPECT_TRUE(v.fail);
    EXPECT_EQ(v.source.value_or(""), "B");
    EXPECT_EQ(v.established, (std::vector<std::size_t>{0, 1}));
    // Above the threshold: pass, nothing established or named.
    v = rule_verdict(claims, candidates, 0.6);
    EXPECT_FALSE(v.fail);
    EXPECT_FALSE(v.source.has_value());
    EXPECT_TRUE(v.established.empty());
    // Low score but no strong match: pass.
    EXPECT_FALSE(rule_verdict(claims, {{{"B", 3, 0.7}}, {{"A", 3, 0.9}}}, 0.1).fail);
}

TEST(ClaimIndex, KeepsOnePaperOnceAndRespectsDimensionCutoffAndExclusions) {
    // 2-d vectors; claims: rows 0 (two problem claims), 1, 2 problem; 3 methodology.
    auto unit = [](float x, float y) {
        const float n = std::sqrt(x * x + y * y);
        return std::vector<float>{x / n, y / n};
    };
    std::vector<float> v;
    std::vector<IndexedClaim> claims = {{0, ClaimDimension::problem}, {0, ClaimDimension::problem}, {1, ClaimDimension::problem},
                                        {2, ClaimDimension::problem}, {3, ClaimDimension::methodology}};
    for (auto p : {unit(1, 0), unit(1, 0.1f), unit(1, 0.2f), unit(1, 0.5f), unit(1, 0)}) v.insert(v.end(), p.begin(), p.end());
    ClaimIndex index(claims, v, 2);
    const float q[2] = {1, 0};
    auto hits = index.search(q, ClaimDimension::problem, 10, 100, {});
    ASSERT_EQ(hits.size(), 3u);  // paper 0 once
    EXPECT_EQ(hits[0].claim, 0u);
    EXPECT_EQ(hits[1].claim, 2u);
    EXPECT_EQ(hits[2].claim, 3u);
    EXPECT_EQ(index.papers_with_claims(ClaimDimension::problem, 100, {}), 3u);
    // k = 2 takes the two best papers; a cutoff at row 2 hides paper 2; excluding paper 0.
    EXPECT_EQ(index.search(q, ClaimDimension::problem, 2, 100, {}).size(), 2u);
    EXPECT_EQ(index.search(q, ClaimDimension::problem, 10, 2, {}).size(), 2u);
    hits = index.search(q, ClaimDimension::problem, 10, 100, {0});
    ASSERT_EQ(hits.size(), 2u);
    EXPECT_EQ(hits[0].claim, 2u);
    EXPECT_EQ(index.papers_with_claims(ClaimDimension::problem, 2, {0}), 1u);
    EXPECT_EQ(index.search(q, ClaimDimension::result, 10, 100, {}).size(), 0u);
    EXPECT_THROW(ClaimIndex({{0, ClaimDimension::problem}}, {1.0f}, 2), UsageError);
}

TEST(ClaimNovEval, ReproducesThePapersClaimNovRow) {
    // 367 of 380 disguises caught, 366 named; 18 of 380 rejected with the source removed;
    // 6 of 400 later-realized ideas rejected (1.5%).
    std::vector<EvalItem> items;
    for (int i = 0; i < 380; ++i) items.push_back({EvalSet::disguised, "S", "", i < 367, i < 366 ? "S" : "X"});
    for (int i = 0; i < 380; ++i) items.push_back({EvalSet::source_out, "S", "", i < 18, ""});
    for (int i = 0; i < 400; ++i) items.push_back({EvalSet::later_realized, "", "", i < 6, ""});
    const ClaimNovCounts c = count_eval_items(items);
    EXPECT_EQ(c.caught, 367u);
    EXPECT_EQ(c.named, 366u);
    EXPECT_EQ(c.source_out_rejected, 18u);
    EXPECT_EQ(c.false_alarms, 6u);
    const ClaimNovMetrics m = claimnov_metrics(c);
    EXPECT_NEAR(m.false_alarm_rate, 0.015, 1e-12);
    EXPECT_NEAR(m.j, 367.0 / 380 - 0.015, 1e-12);
    EXPECT_NEAR(m.delta, 349.0 / 380, 1e-12);
    EXPECT_EQ(std::round(m.j * 100) / 100, 0.95);
    EXPECT_EQ(std::round(m.delta * 100) / 100, 0.92);
    EXPECT_TRUE(std::isnan(m.reject_accepted));
}

TEST(ClaimNovEval, DisputesAndHybrids) {
    std::vector<EvalItem> items = {
        {EvalSet::dispute, "B", "accepted", true, "B"},  {EvalSet::dispute, "B", "accepted", false, "B"},
        {EvalSet::dispute, "B", "rejected", false, "C"}, {EvalSet::dispute, "B", "", false, "B"},
        {EvalSet::hybrid, "B", "", false, "B"},          {EvalSet::hybrid, "B", "", true, "B"},
        {EvalSet::hybrid, "B", "", false, ""},
    };
    const ClaimNovCounts c = count_eval_items(items);
    const ClaimNovMetrics m = claimnov_metrics(c);
    EXPECT_DOUBLE_EQ(m.reject_accepted, 0.5);
    EXPECT_DOUBLE_EQ(m.reject_rejected, 0.0);
    EXPECT_DOUBLE_EQ(m.dispute_named_rate, 0.75);
    EXPECT_DOUBLE_EQ(m.dispute_named_on_pass, 0.5);
    EXPECT_EQ(c.hybrid_passed, 2u);
    EXPECT_EQ(c.hybrid_named, 2u);
    EXPECT_EQ(c.hybrid_pass_and_named, 1u);
}
