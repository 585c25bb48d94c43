// Recall@k, nDCG@k and coverage against hand-computed values and trec_eval's rules (tie order,
// judged queries missing from the run, queries without relevant papers), and the file readers.
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval_metrics.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace novelty;
using novelty::test::TempDir;

namespace {

const std::map<std::string, int> judged = {{"d1", 2}, {"d3", 1}, {"d6", 3}, {"d7", 0}};
const std::vector<std::string> ranked = {"d1", "d2", "d3", "d4", "d5"};

}  // namespace

TEST(RetrievalMetrics, RecallCountsRelevantAmongTheFirstK) {
    // Relevant: d1, d3, d6 (d7 is judged 0, so not relevant).
    EXPECT_DOUBLE_EQ(recall_at(ranked, judged, 1), 1.0 / 3);
    EXPECT_DOUBLE_EQ(recall_at(ranked, judged, 2), 1.0 / 3);
    EXPECT_DOUBLE_EQ(recall_at(ranked, judged, 3), 2.0 / 3);
    EXPECT_DOUBLE_EQ(recall_at(ranked, judged, 100), 2.0 / 3);  // k beyond the list
    EXPECT_DOUBLE_EQ(recall_at({}, judged, 5), 0.0);
    EXPECT_THROW(recall_at(ranked, judged, 0), UsageError);
}

TEST(RetrievalMetrics, NdcgGradedAndBinaryMatchHandComputedValues) {
    // Graded @3: DCG = 2/log2(2) + 0 + 1/log2(4) = 2.5; ideal gains 3,2,1:
    // IDCG = 3 + 2/log2(3) + 1/2.
    const double idcg3 = 3 + 2 / std::log2(3.0) + 0.5;
    EXPECT_NEAR(ndcg_at(ranked, judged, 3, Gain::graded), 2.5 / idcg3, 1e-12);
    // Binary @3: DCG = 1 + 1/2; IDCG = 1 + 1/log2(3) + 1/2.
    EXPECT_NEAR(ndcg_at(ranked, judged, 3, Gain::binary), 1.5 / (1.5 + 1 / std::log2(3.0)), 1e-12);
    // @1: the top document has gain 2 of an ideal 3.
    EXPECT_NEAR(ndcg_at(ranked, judged, 1, Gain::graded), 2.0 / 3.0, 1e-12);
    EXPECT_NEAR(ndcg_at(ranked, judged, 1, Gain::binary), 1.0, 1e-12);
    // A perfect ranking scores 1; nothing relevant retrieved scores 0.
    EXPECT_NEAR(ndcg_at(std::vector<std::string>{"d6", "d1", "d3"}, judged, 3, Gain::graded), 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(ndcg_at(std::vector<std::string>{"d2", "d7"}, judged, 5, Gain::graded), 0.0);
}

TEST(RetrievalMetrics, QueriesWithoutRelevantPapersScoreZero) {
    const std::map<std::string, int> none = {{"d1", 0}, {"d2", -1}};
    EXPECT_DOUBLE_EQ(recall_at(ranked, none, 5), 0.0);
    EXPECT_DOUBLE_EQ(ndcg_at(ranked, none, 5, Gain::graded), 0.0);
}

TEST(RetrievalMetrics, TiesAreOrderedByDocumentIdDescendingWhateverTheFileOrder) {
    const std::vector<RunEntry> entries = {{"a", 0.5}, {"c", 0.9}, {"b", 0.5}, {"d", 0.1}};
    EXPECT_EQ(trec_order(entries), (std::vector<std::string>{"c", "b", "a", "d"}));
    // Recall@2 therefore counts "b", not "a", even though "a" came first in the file.
    Qrels qrels = {{"q", {{"a", 1}}}};
    const std::vector<std::size_t> ks = {2, 3};
    const auto e = evaluate_run("m", {{"q", entries}}, qrels, ks, Gain::binary);
    EXPECT_DOUBLE_EQ(e.per_query.at("q").recall[0], 0.0);
    EXPECT_DOUBLE_EQ(e.per_query.at("q").recall[1], 1.0);
    EXPECT_NEAR(e.per_query.at("q").ndcg[1], 1.0 / std::log2(4.0), 1e-12);
}

TEST(RetrievalMetrics, EvaluateRunAveragesOverEveryJudgedQuery) {
    Qrels qrels = {{"q1", {{"d1", 1}, {"d2", 1}}},  // half found at 1, both at 2
                   {"q2", {{"x", 1}}},              // missing from the run: scores 0
                   {"q3", {{"d1", 0}}}};            // no relevant paper: scores 0
    std::map<std::string, std::vector<RunEntry>> run = {
        {"q1", {{"d1", 3}, {"z", 2}, {"d2", 1}}},
        {"q3", {{"d1", 1}}},
        {"q9", {{"d1", 1}}}};  // not judged: left out
    const std::vector<std::size_t> ks = {1, 3};
    const auto e = evaluate_run("dense", run, qrels, ks, Gain::binary);
    ASSERT_EQ(e.per_query.size(), 3u);
    EXPECT_DOUBLE_EQ(e.per_query.at("q1").recall[0], 0.5);
    EXPECT_DOUBLE_EQ(e.per_query.at("q1").recall[1], 1.0);
    EXPECT_FALSE(e.per_query.at("q2").in_run);
    EXPECT_DOUBLE_EQ(e.mean_recall[0], 0.5 / 3);
    EXPECT_DOUBLE_EQ(e.mean_recall[1], 1.0 / 3);
    // nDCG@3 of q1: (1 + 1/log2(4)) / (1 + 1/log2(3)).
    EXPECT_NEAR(e.mean_ndcg[1], (1.5 / (1 + 1 / std::log2(3.0))) / 3, 1e-12);
    EXPECT_EQ(e.n_missing, 1u);
    EXPECT_EQ(e.n_no_relevant, 1u);
    EXPECT_EQ(e.unjudged, (std::vector<std::string>{"q9"}));
    // Coverage: q1 has both relevant papers in its list, q2 none of 1, q3 has none to find.
    EXPECT_DOUBLE_EQ(e.per_query.at("q1").coverage, 1.0);
    EXPECT_EQ(e.per_query.at("q1").n_pooled, 2u);
    EXPECT_DOUBLE_EQ(e.mean_coverage, 1.0 / 3);
    EXPECT_DOUBLE_EQ(e.pair_coverage, 2.0 / 3);
    EXPECT_THROW(evaluate_run("m", run, qrels, std::vector<std::size_t>{}, Gain::binary), UsageError);
    EXPECT_THROW(evaluate_run("m", run, qrels, std::vector<std::size_t>{0}, Gain::binary), UsageError);
}

TEST(RetrievalFiles, ReadsRunsAndQrelsAndNamesTheLineOfEachProblem) {
    TempDir tmp;
    test::write_file(tmp.file("run"), "# comment\nq1 Q0 d1 1 0.9 dense\n\nq1 Q0 d2 2 0.5 dense\nq1 Q0 d1 1 0.1 bm25\n");
    const RunFile run = read_run(tmp.file("run"));
    ASSERT_EQ(run.size(), 2u);
    EXPECT_EQ(run.at("dense").at("q1").size(), 2u);
    EXPECT_DOUBLE_EQ(run.at("bm25").at("q1")[0].score, 0.1);

    const auto expect_error = [&](const std::string& text, bool qrels, std::size_t line, const std::string& words) {
        test::write_file(tmp.file("bad"), text);
        try {
            if (qrels) read_qrels(tmp.file("bad"));
            else read_run(tmp.file("bad"));
            ADD_FAILURE() << "no error for: " << text;
        } catch (const InputError& e) {
            EXPECT_EQ(e.line(), line) << e.what();
            EXPECT_NE(e.problem().find(words), std::string::npos) << e.what();
            EXPECT_EQ(e.file(), tmp.file("bad"));
        }
    };
    expect_error("q1 Q0 d1 1 0.9\n", false, 1, "6 columns");
    expect_error("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 abc t\n", false, 2, "not a finite number");
    expect_error("q1 Q0 d1 1 0.9 t\nq1 Q0 d1 2 0.8 t\n", false, 2, "listed twice");
    expect_error("", false, 0, "no results");
    expect_error("q1 0 d1\n", true, 1, "4 columns");
    expect_error("q1 0 d1 1\nq1 0 d2 high\n", true, 2, "not an integer");
    expect_error("q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 2\n", true, 3, "judged twice");

    test::write_file(tmp.file("qrels"), "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n");
    const Qrels qrels = read_qrels(tmp.file("qrels"));
    EXPECT_EQ(qrels.at("q1").at("d1"), 2);
    EXPECT_EQ(qrels.at("q1").at("d2"), 0);
    EXPECT_EQ(qrels.size(), 2u);
}
