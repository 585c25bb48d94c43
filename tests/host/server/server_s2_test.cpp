// The Semantic Scholar-compatible routes of the server on the s2 import fixtures (papers with
// external ids, authors, fields of study and SPECTER-shaped 4-d vectors): every id form, every
// field, search filters and paging, title match, batch, recommendations, the key header, and
// the statuses of bad requests.
#include "novelty_host/server/server.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cmath>

using novelty::host::Server;
using novelty::host::ServerOptions;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using nlohmann::json;

namespace {

// Words hashed into 4 dimensions (the fixture corpus's), with a bias so no text is zero.
class Hash4Embedder : public novelty::Embedder {
public:
    std::string name() const override { return "specter_v2"; }
    std::size_t dim() const override { return 4; }
    std::string pooling() const override { return ""; }
    std::vector<float> embed(const std::vector<std::string>& texts) override {
        std::vector<float> out;
        for (const auto& t : texts) {
            float v[4] = {0.1f, 0.1f, 0.1f, 0.1f};
            for (unsigned char c : t) v[c % 4] += 1.0f;
            const float n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
            for (float x : v) out.push_back(x / n);
        }
        return out;
    }
};

class ServerS2Test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir();
        const std::string dir = std::string(NOVELTY_FIXTURES_DIR) + "/import/s2/";
        const auto r = run_cli("corpus import -q --format s2 --out " + shell_quote(tmp_->file("c")) + " --in " +
                               shell_quote(dir + "papers-part0.jsonl") + " " + shell_quote(dir + "papers-part1.jsonl.gz") +
                               " " + shell_quote(dir + "abstracts-part0.jsonl") + " " +
                               shell_quote(dir + "embeddings-specter_v2-part0.jsonl"));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    static void TearDownTestSuite() {
        delete tmp_;
        tmp_ = nullptr;
    }
    static ServerOptions options(const std::string& token = "") {
        ServerOptions o;
        o.corpus_dir = tmp_->file("c");
        o.port = 0;
        o.threads = 1;
        o.token = token;
        o.make_embedder = [] { return std::make_unique<Hash4Embedder>(); };
        return o;
    }
    static TempDir* tmp_;
};
TempDir* ServerS2Test::tmp_ = nullptr;

struct Reply {
    int status = 0;
    json body;
};

Reply get(int port, const std::string& path, const httplib::Headers& headers = {}) {
    httplib::Client client("127.0.0.1", port);
    auto res = client.Get(path.c_str(), headers);
    if (!res) return Reply{-1, json()};
    return Reply{res->status, json::parse(res->body, nullptr, false)};
}

Reply post(int port, const std::string& path, const std::string& body) {
    httplib::Client client("127.0.0.1", port);
    auto res = client.Post(path.c_str(), body, "application/json");
    if (!res) return Reply{-1, json()};
    return Reply{res->status, json::parse(res->body, nullptr, false)};
}

std::vector<std::string> ids_of(const json& papers) {
    std::vector<std::string> ids;
    for (const auto& p : papers) ids.push_back(p["paperId"].get<std::string>());
    return ids;
}

}  // namespace

TEST_F(ServerS2Test, EveryIdFormNamesItsPaper) {
    Server server(options());
    server.start();
    for (const std::string id : {"1001", "CorpusId:1001", "DOI:10.1000/ABC.1", "doi:10.1000/abc.1", "ARXIV:2101.00001",
                                 "URL:https://arxiv.org/abs/2101.00001", "URL:https://doi.org/10.1000/ABC.1"}) {
        const Reply r = get(server.port(), "/graph/v1/paper/" + id);
        ASSERT_EQ(r.status, 200) << id << ": " << r.body.dump();
        EXPECT_EQ(r.body, (json{{"paperId", "1001"}, {"title", "Contrastive pretraining of scientific document encoders"}}))
            << id;
    }
    EXPECT_EQ(get(server.port(), "/graph/v1/paper/PMID:31000001").body["paperId"], "1002");
    const Reply missing = get(server.port(), "/graph/v1/paper/DOI:10.9/none");
    EXPECT_EQ(missing.status, 404);
    EXPECT_EQ(missing.body, (json{{"error", "Paper with id DOI:10.9/none not found"}}));
    // A paper given without a vector is not a row of the corpus, so it is not served.
    EXPECT_EQ(get(server.port(), "/graph/v1/paper/CorpusId:1006").status, 404);
}

TEST_F(ServerS2Test, EveryFieldIsFilledFromTheRecord) {
    Server server(options());
    server.start();
    const Reply r = get(server.port(),
                        "/graph/v1/paper/1001?fields=corpusId,externalIds,url,title,abstract,venue,year,publicationDate,"
                        "authors,citationCount,fieldsOfStudy,s2FieldsOfStudy,citationStyles,embedding,journal,"
                        "publicationTypes,tldr");
    ASSERT_EQ(r.status, 200) << r.body.dump();
    const json& p = r.body;
    EXPECT_EQ(p["paperId"], "1001");
    EXPECT_EQ(p["corpusId"], 1001);
    EXPECT_EQ(p["externalIds"], (json{{"DBLP", "conf/nips/One21"}, {"ArXiv", "2101.00001"}, {"MAG", "3120000001"},
                                      {"CorpusId", 1001}, {"DOI", "10.1000/ABC.1"}}));
    EXPECT_EQ(p["url"], "https://www.semanticscholar.org/paper/00000000000000000000000000000000000003e9");
    EXPECT_EQ(p["abstract"], "We pretrain encoders on citation-linked pairs.");
    EXPECT_EQ(p["venue"], "Neural Information Processing Systems");
    EXPECT_EQ(p["year"], 2021);
    EXPECT_EQ(p["publicationDate"], "2021-01-05");
    EXPECT_EQ(p["authors"], json::array({{{"authorId", "10010"}, {"name", "Author 1001"}}}));
    EXPECT_EQ(p["citationCount"], 12);
    EXPECT_EQ(p["fieldsOfStudy"], json::array({"Computer Science", "Mathematics"}));
    EXPECT_EQ(p["s2FieldsOfStudy"][1], (json{{"category", "Mathematics"}, {"source", "s2-fos-model"}}));
    const std::string bibtex = p["citationStyles"]["bibtex"];
    // It has a journal; the key is the first author's last name, the year and a title word.
    EXPECT_EQ(bibtex.rfind("@article{10012021contrastive,", 0), 0u) << bibtex;
    EXPECT_NE(bibtex.find("title = {Contrastive pretraining of scientific document encoders}"), std::string::npos);
    EXPECT_NE(bibtex.find("author = {Author 1001}"), std::string::npos);
    EXPECT_NE(bibtex.find("year = {2021}"), std::string::npos);
    EXPECT_NE(bibtex.find("doi = {10.1000/ABC.1}"), std::string::npos);
    EXPECT_EQ(p["embedding"]["model"], "specter_v2");
    EXPECT_EQ(p["embedding"]["vector"], json::array({1.0, 0.0, 0.0, 0.0}));
    EXPECT_EQ(p["journal"]["name"], "ArXiv");
    EXPECT_EQ(p["publicationTypes"], json::array({"JournalArticle", "Conference"}));
    EXPECT_TRUE(p["tldr"].is_null());  // not in the record: null, as the API answers
    // A partial date is no publicationDate; a paper without abstract or citation count has null.
    const Reply gut = get(server.port(), "/graph/v1/paper/1002?fields=publicationDate,year");
    EXPECT_TRUE(gut.body["publicationDate"].is_null());
    EXPECT_EQ(gut.body["year"], 2019);
    const Reply sparse = get(server.port(), "/graph/v1/paper/1003?fields=abstract,citationCount");
    EXPECT_TRUE(sparse.body["abstract"].is_null());
    EXPECT_TRUE(sparse.body["citationCount"].is_null());

    const Reply unknown = get(server.port(), "/graph/v1/paper/1001?fields=title,bogus,citations,authors.bogus");
    EXPECT_EQ(unknown.status, 400);
    EXPECT_EQ(unknown.body, (json{{"error", "Unrecognized or unsupported fields: [bogus, authors.bogus]"}}));
    // A model the corpus has no vectors of is a missing value, as the API answers one; the
    // corpus's own model is its vector.
    const Reply v1 = get(server.port(), "/graph/v1/paper/1001?fields=embedding.specter_v1");
    EXPECT_EQ(v1.status, 200);
    EXPECT_TRUE(v1.body["embedding"].is_null());
    EXPECT_EQ(get(server.port(), "/graph/v1/paper/1001?fields=embedding.specter_v2").body["embedding"]["model"], "specter_v2");
    EXPECT_EQ(get(server.port(), "/graph/v1/paper/1001?fields=embedding.specter_v3").status, 400);
}

TEST_F(ServerS2Test, SearchRanksFiltersAndPages) {
    Server server(options());
    server.start();
    const Reply all = get(server.port(), "/graph/v1/paper/search?query=sparse+attention+documents&ranking=bm25&fields=year");
    ASSERT_EQ(all.status, 200) << all.body.dump();
    EXPECT_EQ(all.body["data"][0]["paperId"], "1003");
    EXPECT_EQ(all.body["offset"], 0);
    EXPECT_FALSE(all.body.contains("next"));
    // Hybrid (the default) ranks every searchable paper by the fused ranking: total is all five.
    const Reply hybrid = get(server.port(), "/graph/v1/paper/search?query=sparse+attention+documents&limit=2");
    ASSERT_EQ(hybrid.status, 200) << hybrid.body.dump();
    EXPECT_EQ(hybrid.body["total"], 5);
    EXPECT_EQ(hybrid.body["next"], 2);
    EXPECT_EQ(hybrid.body["data"].size(), 2u);
    EXPECT_EQ(hybrid.body["data"][0], (json{{"paperId", "1003"}, {"title", "Sparse attention for long documents"}}));
    const Reply page2 = get(server.port(), "/graph/v1/paper/search?query=sparse+attention+documents&limit=2&offset=2");
    const Reply whole = get(server.port(), "/graph/v1/paper/search?query=sparse+attention+documents&limit=5");
    EXPECT_EQ(page2.body["offset"], 2);
    EXPECT_EQ(page2.body["next"], 4);
    std::vector<std::string> paged = ids_of(hybrid.body["data"]);
    for (const auto& id : ids_of(page2.body["data"])) paged.push_back(id);
    std::vector<std::string> first4 = ids_of(whole.body["data"]);
    first4.resize(4);
    EXPECT_EQ(paged, first4);

    const auto ids_for = [&](const std::string& filter) {
        const Reply r = get(server.port(), "/graph/v1/paper/search?query=graph+survey+gut+sparse&limit=100&" + filter);
        EXPECT_EQ(r.status, 200) << filter << ": " << r.body.dump();
        std::vector<std::string> ids = ids_of(r.body["data"]);
        std::sort(ids.begin(), ids.end());
        return ids;
    };
    EXPECT_EQ(ids_for("year=2022-2023"), (std::vector<std::string>{"1004", "1005"}));
    EXPECT_EQ(ids_for("year=-2020"), (std::vector<std::string>{"1002", "1003"}));
    EXPECT_EQ(ids_for("year=2021-"), (std::vector<std::string>{"1001", "1004", "1005"}));
    EXPECT_EQ(ids_for("year=2019"), (std::vector<std::string>{"1002"}));
    EXPECT_EQ(ids_for("publicationDateOrYear=2020-06-30:2022-03-01"), (std::vector<std::string>{"1001", "1003", "1004"}));
    EXPECT_EQ(ids_for("publicationDateOrYear=2020-07:"), (std::vector<std::string>{"1001", "1004", "1005"}));
    EXPECT_EQ(ids_for("year=2020-2023&publicationDateOrYear=:2021-12"), (std::vector<std::string>{"1001", "1003"}));
    EXPECT_EQ(ids_for("venue=ACL,ICML"), (std::vector<std::string>{"1003", "1004"}));
    EXPECT_EQ(ids_for("fieldsOfStudy=Medicine"), (std::vector<std::string>{"1002"}));
    EXPECT_EQ(ids_for("minCitationCount=12"), (std::vector<std::string>{"1001", "1002", "1005"}));
    EXPECT_EQ(ids_for("minCitationCount=12&year=2020-2021"), (std::vector<std::string>{"1001"}));
    const Reply none = get(server.port(), "/graph/v1/paper/search?query=zzzz&ranking=bm25");
    EXPECT_EQ(none.body, (json{{"total", 0}, {"offset", 0}, {"data", json::array()}}));
}

TEST_F(ServerS2Test, BadParametersGetTheApisStatuses) {
    Server server(options());
    server.start();
    for (const std::string query :
         {"limit=101", "limit=0", "limit=ten", "offset=950&limit=100", "offset=-1", "year=20x", "year=2020-2019",
          "publicationDateOrYear=2019-13-01:", "ranking=semantic", "openAccessPdf=maybe", "fields=title,nonsense",
          "minCitationCount=many"}) {
        const Reply r = get(server.port(), "/graph/v1/paper/search?query=graph&" + query);
        EXPECT_EQ(r.status, 400) << query;
        EXPECT_TRUE(r.body.contains("error") && r.body["error"].is_string()) << query << ": " << r.body.dump();
    }
    EXPECT_EQ(get(server.port(), "/graph/v1/paper/search").status, 400);  // no query
    EXPECT_EQ(get(server.port(), "/graph/v1/paper/search?query=graph&offset=900&limit=100").status, 200);
    EXPECT_EQ(post(server.port(), "/graph/v1/paper/search?query=graph", "{}").status, 405);
    EXPECT_EQ(get(server.port(), "/graph/v1/paper/batch").status, 405);
}

TEST_F(ServerS2Test, TitleMatchFindsTheClosestTitleOrSaysNotFound) {
    Server server(options());
    server.start();
    const Reply r = get(server.port(), "/graph/v1/paper/search/match?query=Graph%20Neural%20Networks%20for%20Molecules&fields=year");
    ASSERT_EQ(r.status, 200) << r.body.dump();
    ASSERT_EQ(r.body["data"].size(), 1u);
    EXPECT_EQ(r.body["data"][0]["paperId"], "1004");
    EXPECT_EQ(r.body["data"][0]["title"], "Graph neural networks for molecules");
    EXPECT_EQ(r.body["data"][0]["year"], 2022);
    EXPECT_DOUBLE_EQ(r.body["data"][0]["matchScore"].get<double>(), 1.0);
    const Reply none = get(server.port(), "/graph/v1/paper/search/match?query=graph%20theory%20of%20everything");
    EXPECT_EQ(none.status, 404);
    EXPECT_EQ(none.body, (json{{"error", "Title match not found"}}));
}

TEST_F(ServerS2Test, BatchAnswersEachIdInOrderWithNullForUnknownOnes) {
    Server server(options());
    server.start();
    const Reply r = post(server.port(), "/graph/v1/paper/batch?fields=year",
                         json{{"ids", {"ARXIV:2203.00004", "nope", "CorpusId:1002"}}}.dump());
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(r.body, json::parse(R"([{"paperId": "1004", "year": 2022}, null, {"paperId": "1002", "year": 2019}])"));
    json many = json::array();
    for (int i = 0; i < 501; ++i) many.push_back("1001");
    EXPECT_EQ(post(server.port(), "/graph/v1/paper/batch", json{{"ids", many}}.dump()).status, 400);
    many.erase(many.begin());
    EXPECT_EQ(post(server.port(), "/graph/v1/paper/batch", json{{"ids", many}}.dump()).status, 200);
    EXPECT_EQ(post(server.port(), "/graph/v1/paper/batch", "{\"id\": []}").status, 400);
    EXPECT_EQ(post(server.port(), "/graph/v1/paper/batch", "not json").status, 400);
    EXPECT_EQ(post(server.port(), "/graph/v1/paper/batch", "{\"ids\": [1001]}").status, 400);
}

TEST_F(ServerS2Test, RecommendationsAreTheExactNearestPapers) {
    // 1001's vector is [1, 0, 0, 0]: 1004 ([.71, .71, 0, 0]) is nearest, the rest tie at 0 and
    // come by row (date order: 1002, 1003, 1005); the paper itself is never among them.
    Server server(options());
    server.start();
    const Reply r = get(server.port(), "/recommendations/v1/papers/forpaper/CorpusId:1001?limit=3&from=all-cs&fields=year");
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(ids_of(r.body["recommendedPapers"]), (std::vector<std::string>{"1004", "1002", "1003"}));
    EXPECT_EQ(r.body["recommendedPapers"][0]["year"], 2022);
    EXPECT_EQ(get(server.port(), "/recommendations/v1/papers/forpaper/1001").body["recommendedPapers"].size(), 4u);
    EXPECT_EQ(get(server.port(), "/recommendations/v1/papers/forpaper/1001?limit=501").status, 400);
    EXPECT_EQ(get(server.port(), "/recommendations/v1/papers/forpaper/1001?from=elsewhere").status, 400);
    EXPECT_EQ(get(server.port(), "/recommendations/v1/papers/forpaper/CorpusId:9").status, 404);
}

TEST_F(ServerS2Test, TheServersTokenIsTakenAsABearerTokenOrAnApiKey) {
    Server server(options("s3cret"));
    server.start();
    const std::string path = "/graph/v1/paper/1001";
    EXPECT_EQ(get(server.port(), path).status, 403);
    EXPECT_EQ(get(server.port(), path, {{"x-api-key", "wrong"}}).status, 403);
    EXPECT_EQ(get(server.port(), path, {{"x-api-key", "s3cret"}}).status, 200);
    EXPECT_EQ(get(server.port(), path, {{"X-API-KEY", "s3cret"}}).status, 200);
    EXPECT_EQ(get(server.port(), path, {{"Authorization", "Bearer s3cret"}}).status, 200);
    // The /v1 endpoints keep their own rule: the bearer token alone.
    httplib::Client client("127.0.0.1", server.port());
    auto res = client.Post("/v1/search", {{"x-api-key", "s3cret"}}, R"({"queries": [{"id": "1001"}], "k": 1})",
                           "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401);
}

TEST_F(ServerS2Test, NoBadRequestGetsA5xx) {
    // Bad ids, bad parameters and hostile query text on every route: a 4xx with a JSON error.
    Server server(options());
    server.start();
    for (const std::string path :
         {"/graph/v1/paper/search/bulk?query=%22open", "/graph/v1/paper/search/bulk?query=(a", "/graph/v1/paper/search/bulk?query=-",
          "/graph/v1/paper/search/bulk?query=a~99", "/graph/v1/paper/search/bulk?sort=year", "/graph/v1/paper/search/bulk?token=-1",
          "/graph/v1/paper/search/bulk?openAccessPdf=no", "/graph/v1/paper/search/bulk?limit=0",
          "/graph/v1/paper/autocomplete", "/graph/v1/paper/autocomplete?query=%20", "/graph/v1/snippet/search",
          "/graph/v1/snippet/search?query=a&limit=1001", "/graph/v1/snippet/search?query=a&insertedBefore=soon",
          "/graph/v1/snippet/search?query=a&fields=bogus", "/graph/v1/paper/nope/citations", "/graph/v1/paper/1001/citations?limit=0",
          "/graph/v1/paper/1001/references?offset=-1", "/graph/v1/paper/1001/authors?fields=papers.bogus",
          "/graph/v1/paper/1001?fields=citations.citations", "/graph/v1/author/search", "/graph/v1/author/none",
          "/graph/v1/author/none/papers", "/graph/v1/author/10010?fields=papers.bogus", "/graph/v1/paper/1001/nothing"}) {
        const Reply r = get(server.port(), path);
        EXPECT_GE(r.status, 400) << path;
        EXPECT_LT(r.status, 500) << path << ": " << r.body.dump();
        EXPECT_TRUE(r.body.is_object() && r.body.contains("error")) << path << ": " << r.body.dump();
    }
    for (const std::string body : {"", "[]", "{\"positivePaperIds\": []}", "{\"positivePaperIds\": [1001]}",
                                   "{\"positivePaperIds\": [\"1001\"], \"negativePaperIds\": [\"1001\"]}",
                                   "{\"positivePaperIds\": [\"nope\"]}"}) {
        const Reply r = post(server.port(), "/recommendations/v1/papers", body);
        EXPECT_GE(r.status, 400) << body;
        EXPECT_LT(r.status, 500) << body << ": " << r.body.dump();
    }
    EXPECT_EQ(post(server.port(), "/graph/v1/author/batch", "{\"ids\": [3]}").status, 400);
    // 1001 [1, 0, 0, 0] minus 1004 [.71, .71, 0, 0] points away from 1002 [0, 1, 0, 0]: it drops from
    // first (for 1001 alone, after 1004) to last, below 1003 and 1005 (cosine 0, by row).
    const Reply ok = post(server.port(), "/recommendations/v1/papers?fields=year&limit=3",
                          R"({"positivePaperIds": ["CorpusId:1001"], "negativePaperIds": ["1004"]})");
    ASSERT_EQ(ok.status, 200) << ok.body.dump();
    EXPECT_EQ(ids_of(ok.body["recommendedPapers"]), (std::vector<std::string>{"1003", "1005", "1002"}));
    EXPECT_EQ(ok.body["recommendedPapers"][0]["year"], 2020);
}
