// POST /v1/retrieve against `novelty retrieve`: the same queries, methods, k, cutoffs and filter
// give the same records, and the body's problems are 400s naming the key.
#include "novelty/io/npy.hpp"
#include "novelty_host/server/server.hpp"
#include "json_lines.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

using novelty::host::Server;
using novelty::host::ServerOptions;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using nlohmann::json;

namespace {

constexpr std::size_t dim = 8;
const char* const words[] = {"graph", "neural", "protein", "diffusion", "sparse", "attention", "kernel", "robot"};

// 40 papers: titles and abstracts from a small vocabulary (so BM25 ranks differ by query),
// years 2000..2019, two fields, four venues, citations = i; random 8-d vectors.
class ServerRetrieveTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir();
        std::string records;
        for (int i = 0; i < 40; ++i) {
            const std::string title = std::string(words[i % 8]) + " " + words[(i / 8) % 8] + " methods " + std::to_string(i);
            const std::string abstract = std::string("we study ") + words[(i * 3) % 8] + " and " + words[(i * 5 + 1) % 8];
            records += json{{"id", "p" + std::to_string(i)}, {"title", title}, {"abstract", abstract},
                            {"year", 2000 + i % 20}, {"citations", i}, {"field", i % 2 ? "bio" : "ml"},
                            {"venue", "v" + std::to_string(i % 4)}}
                           .dump() +
                       "\n";
        }
        novelty::test::write_file(tmp_->file("papers.jsonl"), records);
        const auto r = run_cli("corpus import -q --in " + shell_quote(tmp_->file("papers.jsonl")) + " --out " +
                               shell_quote(tmp_->file("c")));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto v = novelty::test::random_unit_rows(40, dim, 5);
        novelty::write_npy(tmp_->file("v.npy"), novelty::DType::f32, 40, dim, v.data());
        const auto a = run_cli("corpus add-vectors -q " + shell_quote(tmp_->file("c")) + " --vectors " +
                               shell_quote(tmp_->file("v.npy")));
        ASSERT_EQ(a.exit_code, 0) << a.err;
    }
    static void TearDownTestSuite() {
        delete tmp_;
        tmp_ = nullptr;
    }
    static std::string corpus_dir() { return tmp_->file("c"); }
    static ServerOptions options() {
        ServerOptions o;
        o.corpus_dir = corpus_dir();
        o.port = 0;
        o.threads = 1;
        return o;  // no encoder: every dense query brings its vector
    }
    static TempDir* tmp_;
};
TempDir* ServerRetrieveTest::tmp_ = nullptr;

struct Reply {
    int status = 0;
    json body;
};

Reply post(int port, const std::string& body) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    auto res = client.Post("/v1/retrieve", body, "application/json");
    if (!res) return Reply{-1, json()};
    return Reply{res->status, json::parse(res->body, nullptr, false)};
}

json vector_json(const std::vector<float>& all, std::size_t row) {
    json v = json::array();
    for (std::size_t c = 0; c < dim; ++c) v.push_back(all[row * dim + c]);
    return v;
}

// The CLI's records for `queries` (JSON Lines text) with `flags`.
std::vector<json> cli_records(const std::string& corpus, const TempDir& work, const std::string& queries,
                              const std::string& flags) {
    novelty::test::write_file(work.file("q.jsonl"), queries);
    const auto r = run_cli("retrieve -q --corpus " + shell_quote(corpus) + " --queries " +
                           shell_quote(work.file("q.jsonl")) + " " + flags + " --out " + shell_quote(work.file("r.jsonl")));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? novelty::test::json_lines(work.file("r.jsonl")) : std::vector<json>{};
}

}  // namespace

TEST_F(ServerRetrieveTest, EveryMethodRepliesAsTheCliWrites) {
    // Three queries (one with its own cutoff, one excluding a paper) through `novelty retrieve`
    // with --vectors and POST /v1/retrieve with the same vectors: the same records, key for key.
    TempDir work;
    const auto vectors = novelty::test::random_unit_rows(3, dim, 11);
    novelty::write_npy(work.file("q.npy"), novelty::DType::f32, 3, dim, vectors.data());
    const json queries = json::array(
        {json{{"id", "a"}, {"title", "graph neural methods"}},
         json{{"id", "b"}, {"title", "protein diffusion"}, {"text", "sparse kernel"}, {"date", "2010"}},
         json{{"id", "c"}, {"title", "attention robot"}, {"exclude", {"p5"}}}});
    std::string lines;
    for (const auto& q : queries) lines += q.dump() + "\n";
    const auto expected = cli_records(corpus_dir(), work, lines,
                                      "--vectors " + shell_quote(work.file("q.npy")) + " --k 6 --fusion-depth 20");
    ASSERT_EQ(expected.size(), 3u);

    json with_vectors = queries;
    for (std::size_t i = 0; i < 3; ++i) with_vectors[i]["vector"] = vector_json(vectors, i);
    Server server(options());
    server.start();
    const Reply r = post(server.port(), json{{"queries", with_vectors}, {"k", 6}, {"fusion_depth", 20}}.dump());
    ASSERT_EQ(r.status, 200) << r.body.dump();
    ASSERT_EQ(r.body["results"].size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.body["results"][i], expected[i]) << "query " << i;
    EXPECT_EQ(r.body["results"][1]["cutoff"], "2010");
    for (const auto& tag : {"dense", "bm25", "hybrid"}) {
        EXPECT_FALSE(r.body["results"][0]["results"][tag].empty()) << tag;
        for (const auto& hit : r.body["results"][2]["results"][tag]) EXPECT_NE(hit["id"], "p5") << tag;
    }
}

TEST_F(ServerRetrieveTest, Bm25AloneNeedsNoVectorAndFiltersAndCutoffsApplyAsOnTheCli) {
    // BM25 alone on text queries (no vector, and this server has no encoder), a request cutoff,
    // a metadata filter, and a query naming a corpus paper (its title and abstract are the text).
    TempDir work;
    const std::string lines = "{\"id\": \"t1\", \"title\": \"graph kernel\"}\n{\"id\": \"p9\"}\n";
    const auto expected = cli_records(corpus_dir(), work, lines,
                                      "--methods bm25 --k 5 --cutoff 2015 --field bio --min-citations 4");
    ASSERT_EQ(expected.size(), 2u);
    Server server(options());
    server.start();
    const json body{{"queries", {{{"id", "t1"}, {"title", "graph kernel"}}, {{"id", "p9"}}}},
                    {"methods", {"bm25"}},
                    {"k", 5},
                    {"cutoff", "2015"},
                    {"filter", {{"field", "bio"}, {"min_citations", 4}}}};
    const Reply r = post(server.port(), body.dump());
    ASSERT_EQ(r.status, 200) << r.body.dump();
    EXPECT_EQ(r.body["results"][0], expected[0]);
    EXPECT_EQ(r.body["results"][1], expected[1]);
    EXPECT_FALSE(r.body["results"][0]["results"]["bm25"].empty());
    for (const auto& hit : r.body["results"][1]["results"]["bm25"]) EXPECT_NE(hit["id"], "p9");

    // The same methods given as one comma-separated string.
    json as_string = body;
    as_string["methods"] = "bm25";
    EXPECT_EQ(post(server.port(), as_string.dump()).body, r.body);
}

TEST_F(ServerRetrieveTest, BadBodiesAreRefusedNamingTheKey) {
    Server server(options());
    server.start();
    const json text_query = json::array({{{"id", "q"}, {"title", "graph"}}});
    const auto refused = [&](const json& body, const std::string& parameter) {
        const Reply r = post(server.port(), body.dump());
        EXPECT_EQ(r.status, 400) << body.dump();
        EXPECT_EQ(r.body.value("parameter", ""), parameter) << r.body.dump();
    };
    refused(json{{"queries", text_query}, {"methods", {"bm25", "lexical"}}}, "methods");
    refused(json{{"queries", text_query}, {"methods", {"bm25", "bm25"}}}, "methods");
    refused(json{{"queries", text_query}, {"methods", json::array()}}, "methods");
    refused(json{{"queries", text_query}, {"methods", 3}}, "methods");
    refused(json{{"queries", text_query}, {"methods", {"bm25"}}, {"k", 0}}, "k");
    refused(json{{"queries", text_query}, {"methods", {"bm25"}}, {"expand", 2}}, "expand");
    refused(json{{"queries", text_query}, {"methods", {"bm25"}}, {"cutoff", "2019-13"}}, "cutoff");
    // Dense needs a vector, and this server has no encoder for the text.
    refused(json{{"queries", text_query}, {"methods", {"dense"}}}, "queries[0]");
    // BM25 needs text: a query with neither text nor a corpus paper's id has none.
    refused(json{{"queries", {{{"id", "nope"}, {"vector", json::array({1, 0, 0, 0, 0, 0, 0, 0})}}}}, {"methods", {"bm25"}}},
            "queries[0]");
}
