// The request layer's resolver (novelty/request/resolver.hpp) and record reader
// (record_from_json): where a record's vector comes from, its scope and filter, texts for BM25,
// the search queries and score input it yields, reach problems, and how problems are reported
// for a file and for a request.
#include "novelty/request/resolver.hpp"

#include "novelty/encoder/embedder.hpp"
#include "novelty/util/error.hpp"
#include "request/json/record_json.hpp"
#include "scoring_corpus.hpp"
#include "test_util.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

namespace novelty {
namespace {

// 40 papers "p0".."p39" of dimension 4, paper i published in 2000 + i % 20, field "a" for even
// i and "b" for odd i.
struct ResolverFixture : ::testing::Test {
    test::TempDir tmp;
    std::string dir;
    std::vector<float> vectors;
    void SetUp() override {
        vectors.resize(40 * 4);
        for (std::size_t i = 0; i < vectors.size(); ++i) vectors[i] = 1.0f + static_cast<float>((i * 7) % 5);
        std::vector<std::string> fields;
        for (std::size_t i = 0; i < 40; ++i) fields.push_back(i % 2 == 0 ? "a" : "b");
        dir = test::make_scoring_corpus(tmp, vectors, 4, fields);
    }

    static RecordBatch request(const nlohmann::json& list, std::size_t dim = 4) {
        RecordOrigin origin;
        origin.key = "ideas";
        RecordJsonRules rules;
        rules.dim = dim;
        return records_from_json(list, rules, origin);
    }
};

TEST_F(ResolverFixture, AVectorIsGivenElseEmbeddedElseTheCorpusPapers) {
    const Corpus corpus = Corpus::open(dir);
    const nlohmann::json list = {{{"id", "given"}, {"vector", {1, 0, 0, 0}}},
                                 {{"id", "text"}, {"title", "T"}, {"text", "words"}},
                                 {{"id", "p5"}}};
    ResolvedBatch r = RequestResolver(corpus, {}).resolve(request(list));
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(std::vector<float>(r.vectors.begin(), r.vectors.begin() + 4), (std::vector<float>{1, 0, 0, 0}));
    EXPECT_EQ(r.to_embed, (std::vector<std::size_t>{1}));
    std::vector<float> p5(4);
    corpus.vectors().row_as_f32(*corpus.find_row("p5"), p5.data());
    EXPECT_EQ(std::vector<float>(r.vectors.begin() + 8, r.vectors.end()), p5);
    // The record naming a corpus paper leaves it out; the others leave nothing out.
    EXPECT_EQ(r.scopes[2].excluded_rows, (std::vector<std::int64_t>{static_cast<std::int64_t>(*corpus.find_row("p5"))}));
    EXPECT_TRUE(r.scopes[0].excluded_rows.empty());

    std::vector<std::string> seen;
    embed_pending(r, [&](const std::vector<std::string>& texts) {
        seen = texts;
        return std::vector<float>{0, 0, 2, 0};
    }, EmbedSettings{"fake", 64, {}, ""});
    EXPECT_EQ(seen, (std::vector<std::string>{"T\n\nwords"}));
    EXPECT_TRUE(r.to_embed.empty());
    EXPECT_EQ(std::vector<float>(r.vectors.begin() + 4, r.vectors.begin() + 8), (std::vector<float>{0, 0, 2, 0}));
}

TEST_F(ResolverFixture, AnEncoderOfAnotherDimensionIsRefusedNamingIt) {
    const Corpus corpus = Corpus::open(dir);
    ResolvedBatch r = RequestResolver(corpus, {}).resolve(request({{{"id", "x"}, {"text", "words"}}}));
    try {
        embed_pending(r, [](const std::vector<std::string>&) { return std::vector<float>(3); }, EmbedSettings{"small", 64, {}, ""});
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("the encoder 'small' makes vectors of dimension 3 but the corpus has 4"),
                  std::string::npos) << e.what();
    }
}

TEST_F(ResolverFixture, ARecordWithNothingToSearchByIsRefusedBeforeAnyEmbedding) {
    const Corpus corpus = Corpus::open(dir);
    const nlohmann::json list = {{{"id", "text"}, {"text", "words"}}, {{"id", "nope"}}};
    try {
        RequestResolver(corpus, {}).resolve(request(list));
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_EQ(std::string(e.what()), "ideas[1]: 'nope' has no text and is not the id of a corpus paper");
        EXPECT_EQ(e.parameter(), "ideas[1]");
    }
    // Without vectors or texts needed (a filter alone), such a record is fine.
    ResolveOptions filters_only;
    filters_only.vectors = false;
    EXPECT_EQ(RequestResolver(corpus, filters_only).resolve(request(list)).size(), 2u);
}

TEST_F(ResolverFixture, ScopesAndFiltersBecomeSearchQueriesAndScoreInput) {
    const Corpus corpus = Corpus::open(dir);
    ResolveOptions options;
    options.cutoff = parse_date("2004");
    options.exclude = {"p0"};
    options.filter.fields = {"a"};
    const nlohmann::json list = {{{"id", "one"}, {"vector", {1, 1, 0, 0}}},
                                 {{"id", "two"}, {"vector", {0, 1, 1, 0}}, {"date", "2009"}, {"exclude", {"p2"}},
                                  {"filter", {{"min_citations", 3}}}}};
    const ResolvedBatch r = RequestResolver(corpus, options).resolve(request(list));
    const SearchQueries q = r.queries();
    EXPECT_EQ(q.n_queries, 2u);
    EXPECT_EQ(q.scope.row_limit, (std::vector<std::size_t>{10, 20}));
    EXPECT_EQ(q.scope.excluded.size(0), 1u);
    EXPECT_EQ(q.scope.excluded.size(1), 2u);
    ASSERT_EQ(q.scope.filters.size(), 2u);
    ASSERT_TRUE(q.scope.filters[0] && q.scope.filters[1]);
    for (std::size_t row = 0; row < corpus.size(); ++row) {
        const Paper p = corpus.paper(row);
        EXPECT_EQ(q.scope.filters[0]->allows(static_cast<std::int64_t>(row)), p.field == "a") << row;
        EXPECT_EQ(q.scope.filters[1]->allows(static_cast<std::int64_t>(row)), p.field == "a" && p.citations.value_or(0) >= 3) << row;
    }
    std::vector<float> rows;
    const ScoreInput second = r.score_input({1}, rows);
    EXPECT_EQ(second.n_ideas, 1u);
    EXPECT_EQ(second.row_limit, (std::vector<std::size_t>{20}));
    EXPECT_EQ(rows, (std::vector<float>{0, 1, 1, 0}));
    ASSERT_EQ(second.filters.size(), 1u);
    EXPECT_EQ(second.filters[0], q.scope.filters[1]);
}

TEST_F(ResolverFixture, ReachProblemsNameTheRecordAsItsOriginDoes) {
    const Corpus corpus = Corpus::open(dir);
    ResolveOptions options;
    options.cutoff = parse_date("2001");  // 4 papers
    const ResolvedBatch r = RequestResolver(corpus, options).resolve(request({{{"id", "x"}, {"vector", {1, 0, 0, 0}}}}));
    EXPECT_EQ(r.reach_problems(corpus.size(), 2, 2), (std::vector<std::string>{""}));
    EXPECT_FALSE(r.reach_problems(corpus.size(), 5, 2)[0].empty());
    try {
        r.check_reach(corpus.size(), 5, 2, "lower p");
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("ideas[0]: ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("; lower p"), std::string::npos) << e.what();
    }
}

TEST_F(ResolverFixture, TextsForBm25AreTheRecordsElseItsCorpusPapers) {
    const Corpus corpus = Corpus::open(dir);
    ResolveOptions options;
    options.vectors = false;
    options.texts = true;
    const nlohmann::json list = {{{"id", "q"}, {"title", "Title"}}, {{"id", "p3"}}};
    const ResolvedBatch r = RequestResolver(corpus, options).resolve(request(list, 0));
    const Paper p3 = corpus.paper(*corpus.find_row("p3"));
    EXPECT_EQ(r.texts, (std::vector<std::string>{"Title", embedding_text(p3.title, p3.abstract)}));
    EXPECT_TRUE(r.vectors.empty());
    EXPECT_EQ(r.queries().n_queries, 0u);
    EXPECT_EQ(r.queries().scope.row_limit.size(), 2u);
}

TEST_F(ResolverFixture, RequestRecordsAreReadAsFileRecordsAreWithTheirPlaceNamed) {
    try {
        request({{{"id", "a"}}, {{"id", "a"}}});
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_EQ(std::string(e.what()), "ideas[1]: 'a' appears twice (first as ideas[0]); ids must be unique");
        EXPECT_EQ(e.parameter(), "ideas[1].id");
    }
    for (const auto& [record, words] : std::vector<std::pair<nlohmann::json, std::string>>{
             {{{"id", "a"}, {"vector", {1, 0, 0}}}, "'vector' has 3 numbers but the corpus vectors have 4"},
             {{{"id", "a"}, {"vector", {0, 0, 0, 0}}}, "'vector' is a zero vector"},
             {{{"id", "a"}, {"date", "May"}}, "unparseable date 'May'"},
             {{{"id", "a"}, {"title", 3}}, "'title' must be a string, found a number"},
             {{{"title", "t"}}, "missing 'id'"},
             {{{"id", "a"}, {"filter", {{"venue", ""}}}}, "'filter.venue' is an empty name"}}) {
        try {
            request(nlohmann::json::array({record}));
            ADD_FAILURE() << "no error for " << record.dump();
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("ideas[0]: " + words), std::string::npos) << e.what();
        }
    }
}

TEST_F(ResolverFixture, AppendingBatchesKeepsEachRecordsFilter) {
    const Corpus corpus = Corpus::open(dir);
    RequestResolver resolver(corpus, {});
    ResolvedBatch joined = resolver.resolve(request({{{"id", "x"}, {"vector", {1, 0, 0, 0}}}}));
    joined.append(resolver.resolve(request({{{"id", "y"}, {"vector", {0, 1, 0, 0}}, {"filter", {{"field", "b"}}}}})));
    ASSERT_EQ(joined.size(), 2u);
    ASSERT_EQ(joined.filters.size(), 2u);
    EXPECT_FALSE(joined.filters[0]);
    EXPECT_TRUE(joined.filters[1]);
    EXPECT_EQ(joined.vectors.size(), 8u);
}

}  // namespace
}  // namespace novelty
