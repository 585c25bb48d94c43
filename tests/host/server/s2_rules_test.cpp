// The rules of the Semantic Scholar-compatible API that need no server: one reading of a paper's
// external ids for the API and the web page's links, the lookups an S2 paper id stands for, the
// bulk search's query syntax and the edit distance of its fuzzy words.
#include "server/paper_ids.hpp"
#include "server/s2/s2_bulk_query.hpp"
#include "server/s2/s2_error.hpp"
#include "novelty_host/llm/http_embedder.hpp"
#include "server/ui_api.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace novelty::host;
using nlohmann::json;

namespace {

nlohmann::ordered_json ids_of(const std::string& id, const std::string& extra, const std::string& format = "") {
    novelty::Paper paper;
    paper.id = id;
    return external_ids(paper, json::parse(extra), format);
}

}  // namespace

TEST(S2Rules, TheWebLinkAndTheApiReadExternalIdsAlike) {
    // The camel-case object the API takes is the web page's too, and the other way round.
    const std::string camel = R"({"externalIds": {"DOI": "10.1/x", "ArXiv": "2101.1"}})";
    EXPECT_EQ(ids_of("p", camel)["DOI"], "10.1/x");
    EXPECT_EQ(detail::paper_link("p", camel), "https://doi.org/10.1/x");
    // An id of the form doi:X, arxiv:X or pmid:N is that id for both.
    EXPECT_EQ(ids_of("doi:10.2/y", "{}")["DOI"], "10.2/y");
    EXPECT_EQ(detail::paper_link("doi:10.2/y", "{}"), "https://doi.org/10.2/y");
    EXPECT_EQ(ids_of("pmid:77", "{}")["PubMed"], "77");
    EXPECT_EQ(detail::paper_link("pmid:77", "{}"), "https://pubmed.ncbi.nlm.nih.gov/77/");
    // The import format says what a bare id is.
    EXPECT_EQ(ids_of("31000001", "{}", "pubmed")["PubMed"], "31000001");
    EXPECT_EQ(detail::paper_link("31000001", "{}", "pubmed"), "https://pubmed.ncbi.nlm.nih.gov/31000001/");
    EXPECT_EQ(ids_of("1001", "{}", "s2")["CorpusId"], 1001);
    EXPECT_TRUE(ids_of("x", "{}").empty());
}

TEST(S2Rules, EveryPaperIdFormHasItsLookup) {
    EXPECT_EQ(paper_id_lookup("CorpusId:7").keys, (std::vector<std::string>{"CorpusId:7"}));
    EXPECT_EQ(paper_id_lookup("PMCID:123").keys, (std::vector<std::string>{"PMCID:123", "pmc:PMC123"}));
    EXPECT_EQ(paper_id_lookup("URL:https://arxiv.org/abs/2101.1").keys,
              (std::vector<std::string>{"URL:https://arxiv.org/abs/2101.1", "https://arxiv.org/abs/2101.1"}));
    const std::string sha = "0123456789abcdef0123456789ABCDEF01234567";
    EXPECT_EQ(paper_id_lookup(sha).s2_sha, "0123456789abcdef0123456789abcdef01234567");
    EXPECT_EQ(paper_id_lookup("URL:https://www.semanticscholar.org/paper/Some-Title/" + sha).s2_sha,
              "0123456789abcdef0123456789abcdef01234567");
    EXPECT_EQ(paper_id_lookup("123").s2_sha, "");
    EXPECT_TRUE(paper_id_lookup("").keys.empty());
    EXPECT_EQ(s2_sha_of_url("https://example.org/paper/" + sha), "");
}

TEST(S2Rules, TheBulkQuerySyntaxParsesAsDocumented) {
    using s2::BulkQuery;
    using s2::parse_bulk_query;
    const BulkQuery both = parse_bulk_query("fish ladder");
    EXPECT_EQ(both.kind, BulkQuery::Kind::all_of);
    EXPECT_EQ(both.parts.size(), 2u);
    const BulkQuery either = parse_bulk_query("fish | ladder + outflow");  // | binds loosest
    ASSERT_EQ(either.kind, BulkQuery::Kind::any_of);
    EXPECT_EQ(either.parts[1].kind, BulkQuery::Kind::all_of);
    const BulkQuery without = parse_bulk_query("fish -(ladder | \"fish ladder\"~3)");
    ASSERT_EQ(without.parts.size(), 2u);
    EXPECT_EQ(without.parts[1].kind, BulkQuery::Kind::none_of);
    EXPECT_EQ(without.parts[1].parts[0].parts[1].kind, BulkQuery::Kind::phrase);
    EXPECT_EQ(without.parts[1].parts[0].parts[1].distance, 3);
    EXPECT_TRUE(parse_bulk_query("fish*").prefix);
    EXPECT_EQ(parse_bulk_query("fish~").distance, 2);
    EXPECT_EQ(parse_bulk_query("fish~1").distance, 1);
    EXPECT_EQ(parse_bulk_query("COVID-19").kind, BulkQuery::Kind::phrase);
    EXPECT_TRUE(parse_bulk_query("  ").parts.empty());
    for (const char* bad : {"\"open", "(fish", "fish)", "fish |", "-", "fish~12"})
        EXPECT_THROW(parse_bulk_query(bad), s2::S2Error) << bad;
    // Deep nesting is refused, not recursed into until the stack runs out.
    EXPECT_THROW(parse_bulk_query(std::string(5000, '(') + "fish" + std::string(5000, ')')), s2::S2Error);
    EXPECT_THROW(parse_bulk_query(std::string(5000, '-') + "fish"), s2::S2Error);
    EXPECT_NO_THROW(parse_bulk_query(std::string(20, '(') + "fish" + std::string(20, ')')));
    std::string many;
    for (int i = 0; i < 300; ++i) many += "w" + std::to_string(i) + "~ ";
    EXPECT_THROW(parse_bulk_query(many), s2::S2Error);
}

TEST(S2Rules, EditDistanceStopsPastItsLimit) {
    EXPECT_EQ(s2::edit_distance("microbiome", "mikrobiome", 2), 1u);
    EXPECT_EQ(s2::edit_distance("fish", "fish", 2), 0u);
    EXPECT_EQ(s2::edit_distance("fish", "dish", 0), 1u);
    EXPECT_EQ(s2::edit_distance("a", "abcdef", 2), 3u);
}

TEST(S2Rules, AnEmbeddingServerOfTheRecordedModelIsTheCorpussEncoder) {
    // An s2 import records "specter_v2"; a server of that model serves its text queries.
    EXPECT_TRUE(same_encoder("specter_v2", "http://127.0.0.1:9/v1#specter_v2"));
    EXPECT_TRUE(same_encoder("all-MiniLM-L6-v2", "all-MiniLM-L6-v2"));
    EXPECT_FALSE(same_encoder("specter_v2", "http://127.0.0.1:9/v1#specter_v1"));
    EXPECT_FALSE(same_encoder("http://a/v1#m", "http://b/v1#m"));
    EXPECT_FALSE(same_encoder("specter_v2", "all-MiniLM-L6-v2"));
}
