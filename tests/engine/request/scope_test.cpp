// The request layer's record resolution (novelty/request/scope.hpp), shared by the CLI, the server
// and ClaimNov: cutoffs as row limits, exclusions in order, the record's own paper, unknown ids.
#include "novelty/request/scope.hpp"

#include "novelty/util/dates.hpp"
#include "novelty/util/error.hpp"
#include "scoring_corpus.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace novelty {
namespace {

// 40 papers "p0".."p39", paper i published in 2000 + i % 20: two papers a year.
struct ScopeFixture : ::testing::Test {
    test::TempDir tmp;
    std::string dir;
    void SetUp() override {
        std::vector<float> v(40 * 4);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + static_cast<float>(i % 5);
        dir = test::make_scoring_corpus(tmp, v, 4);
    }
    std::int64_t row_of(const Corpus& c, const std::string& id) { return static_cast<std::int64_t>(*c.find_row(id)); }
};

TEST_F(ScopeFixture, CutoffIsARowLimitAndTheRecordsOwnDateWins) {
    const Corpus corpus = Corpus::open(dir);
    ScopeResolver resolver(corpus, parse_date("2004"));
    const RecordScope by_default = resolver.resolve("idea", std::nullopt, {});
    EXPECT_EQ(by_default.row_limit, 10u);  // 2000..2004, two papers each
    EXPECT_EQ(by_default.cutoff, "2004");
    const RecordScope own = resolver.resolve("idea", parse_date("2009-06"), {});
    EXPECT_EQ(own.row_limit, 18u);  // a paper dated by its year alone counts from the year's end
    EXPECT_EQ(own.cutoff, "2009-06");
    ScopeResolver no_cutoff(corpus);
    const RecordScope all = no_cutoff.resolve("idea", std::nullopt, {});
    EXPECT_EQ(all.row_limit, 40u);
    EXPECT_EQ(all.cutoff, "");
}

TEST_F(ScopeFixture, ExclusionsKeepTheirOrderCountUnknownIdsAndEndWithTheOwnPaper) {
    const Corpus corpus = Corpus::open(dir);
    ScopeResolver resolver(corpus, std::nullopt, {"p3", "nope"});
    const RecordScope scope = resolver.resolve("p7", std::nullopt, {"p1", "missing", "p3"});
    EXPECT_EQ(scope.excluded_ids, (std::vector<std::string>{"p3", "nope", "p1", "missing", "p3", "p7"}));
    EXPECT_EQ(scope.excluded_rows, (std::vector<std::int64_t>{row_of(corpus, "p3"), row_of(corpus, "p1"),
                                                              row_of(corpus, "p3"), row_of(corpus, "p7")}));
    EXPECT_EQ(scope.unknown_excluded, 2u);
    // Made-up ids (.npy rows) never exclude the paper that happens to share them.
    const RecordScope made_up = resolver.resolve("p7", std::nullopt, {}, false);
    EXPECT_EQ(made_up.excluded_ids, (std::vector<std::string>{"p3", "nope"}));
    // An idea that names no paper excludes nothing of its own.
    EXPECT_EQ(resolver.resolve("idea", std::nullopt, {}).excluded_rows.size(), 1u);
}

TEST_F(ScopeFixture, ReachCountsDistinctRowsBelowTheLimit) {
    const Corpus corpus = Corpus::open(dir);
    ScopeResolver resolver(corpus, parse_date("2002"));  // 6 rows
    // p0 and p1 (year 2000, 2001) are below the limit, p39 (2019) is not; p1 is named twice.
    const RecordScope scope = resolver.resolve("p0", std::nullopt, {"p1", "p1", "p39"});
    EXPECT_EQ(scope_reach_problem(scope, corpus.size(), 2, 2), "");
    EXPECT_EQ(scope_reach_problem(scope, corpus.size(), 3, 1), "");
    EXPECT_NE(scope_reach_problem(scope, corpus.size(), 4, 1), "");  // 4 reachable, p + 1 needed
}

TEST_F(ScopeFixture, ScoreWindowsFollowThePapersDefault) {
    const Corpus corpus = Corpus::open(dir);  // two papers a year, 2000..2019
    EXPECT_FALSE(score_windows(corpus, "", "").split_row);
    // A split in 2010: the 2011 default lies after it, so every earlier paper is historical.
    const ScoreWindows early = score_windows(corpus, "2010", "");
    EXPECT_EQ(early.split_row, 22u);
    EXPECT_FALSE(early.historical_from_row);
    EXPECT_EQ(early.historical_from, "");
    // A split in 2015: HD's window starts in 2011 (after the 22 rows through 2010).
    const ScoreWindows later = score_windows(corpus, "2015", "");
    EXPECT_EQ(later.split_row, 32u);
    EXPECT_EQ(later.historical_from_row, 22u);
    EXPECT_EQ(later.historical_from, "2011");
    EXPECT_FALSE(score_windows(corpus, "2015", "none").historical_from_row);
    const ScoreWindows given = score_windows(corpus, "2015", "2005");
    EXPECT_EQ(given.historical_from_row, 10u);
    EXPECT_EQ(given.historical_from, "2005");
    try {
        score_windows(corpus, "2015", "soon");
        ADD_FAILURE();
    } catch (const UsageError& e) {
        EXPECT_EQ(e.parameter(), "historical_from");
    }
}

TEST_F(ScopeFixture, PaperVectorsAndTheReportContext) {
    const Corpus corpus = Corpus::open(dir);
    std::vector<float> v(4, -1.0f);
    ASSERT_TRUE(copy_paper_vector(corpus, "p2", v.data()));
    std::vector<float> expected(4);
    corpus.vectors().row_as_f32(static_cast<std::size_t>(row_of(corpus, "p2")), expected.data());
    EXPECT_EQ(v, expected);
    EXPECT_FALSE(copy_paper_vector(corpus, "none", v.data()));
    const ScoreReportContext context = score_report_context(corpus, 7, 3, true, 5, "cpu");
    EXPECT_EQ(context.corpus_identity, corpus.identity());
    EXPECT_EQ(context.p, 7u);
    EXPECT_EQ(context.q, 3u);
    EXPECT_TRUE(context.include_self);
    EXPECT_EQ(context.evidence, 5u);
    EXPECT_EQ(context.backend, "cpu");
}

}  // namespace
}  // namespace novelty
