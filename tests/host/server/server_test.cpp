// The HTTP server on loopback: every endpoint against the CLI's output, every error path, auth,
// batching, jobs, metrics, a bounded load test and graceful shutdown.
#include "novelty/search/backends.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"
#include "novelty_host/server/server.hpp"
#include "search/search_counters.hpp"
#include "search_reference.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

using novelty::host::Server;
using novelty::host::ServerOptions;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using nlohmann::json;

namespace {

constexpr std::size_t dim = 8;

// A deterministic stand-in encoder: a text's vector comes from its hash.
class FakeEmbedder : public novelty::Embedder {
public:
    explicit FakeEmbedder(std::atomic<int>* calls = nullptr, std::string precision = "")
        : calls_(calls), precision_(std::move(precision)) {}
    std::string name() const override { return "fake-8"; }
    std::string precision() const override { return precision_; }
    std::size_t dim() const override { return ::dim; }
    std::string pooling() const override { return "mean"; }
    std::vector<float> embed(const std::vector<std::string>& texts) override {
        if (calls_) ++*calls_;
        std::vector<float> out;
        for (const auto& t : texts) out_append(out, t);
        return out;
    }
    static std::vector<float> vector_of(const std::string& text) {
        std::vector<float> out;
        out_append(out, text);
        return out;
    }

private:
    static void out_append(std::vector<float>& out, const std::string& text) {
        const auto v = novelty::test::random_unit_rows(1, ::dim, static_cast<std::uint32_t>(std::hash<std::string>{}(text)));
        out.insert(out.end(), v.begin(), v.end());
    }
    std::atomic<int>* calls_;
    std::string precision_;
};

// 60 papers p0..p59 (years 2000..2019, citations), random 8-d vectors; built once.
class ServerTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir();
        std::string records;
        for (int i = 0; i < 60; ++i)
            records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper " + std::to_string(i) +
                       "\", \"year\": " + std::to_string(2000 + i % 20) + ", \"citations\": " + std::to_string(i) + "}\n";
        novelty::test::write_file(tmp_->file("papers.jsonl"), records);
        const auto r = run_cli("corpus import -q --in " + shell_quote(tmp_->file("papers.jsonl")) + " --out " +
                               shell_quote(tmp_->file("c")));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto v = novelty::test::random_unit_rows(60, dim, 3);
        novelty::write_npy(tmp_->file("v.npy"), novelty::DType::f32, 60, dim, v.data());
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
        o.http_threads = 8;
        o.make_embedder = [] { return std::make_unique<FakeEmbedder>(); };
        return o;
    }

    static std::vector<float> idea_vectors(std::size_t n, std::uint32_t seed = 4) {
        return novelty::test::random_unit_rows(n, dim, seed);
    }
    static json vector_json(const std::vector<float>& all, std::size_t row) {
        json v = json::array();
        for (std::size_t c = 0; c < dim; ++c) v.push_back(all[row * dim + c]);
        return v;
    }

    static TempDir* tmp_;
};
TempDir* ServerTest::tmp_ = nullptr;

struct Reply {
    int status = 0;
    json body;
    std::string text;
};

Reply post(int port, const std::string& path, const std::string& body, const std::string& token = "") {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = client.Post(path.c_str(), headers, body, "application/json");
    if (!res) return Reply{-1, json(), "no reply: " + httplib::to_string(res.error())};
    Reply r{res->status, json(), res->body};
    r.body = json::parse(res->body, nullptr, false);
    return r;
}

Reply get(int port, const std::string& path, const std::string& token = "") {
    httplib::Client client("127.0.0.1", port);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = client.Get(path.c_str(), headers);
    if (!res) return Reply{-1, json(), "no reply"};
    Reply r{res->status, json(), res->body};
    r.body = json::parse(res->body, nullptr, false);
    return r;
}

// The number after `series ` in a Prometheus text page; -1 when absent.
double metric(const std::string& page, const std::string& series) {
    const auto at = page.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(page.substr(at + series.size() + 2));
}

}  // namespace

TEST_F(ServerTest, ScoreRepliesAsTheCliWrites) {
    // The same 5 ideas through `novelty score` and POST /v1/score: identical result objects.
    TempDir work;
    const auto vectors = idea_vectors(5);
    novelty::write_npy(work.file("ideas.npy"), novelty::DType::f32, 5, dim, vectors.data());
    novelty::test::write_file(work.file("ideas.jsonl"),
                              "{\"id\": \"i1\"}\n{\"id\": \"i2\", \"date\": \"2015\"}\n{\"id\": \"i3\", \"exclude\": [\"p1\"]}\n"
                              "{\"id\": \"i4\"}\n{\"id\": \"p7\"}\n");
    const auto cli = run_cli("score -q --corpus " + shell_quote(corpus_dir()) + " --ideas " +
                             shell_quote(work.file("ideas.jsonl")) + " --vectors " + shell_quote(work.file("ideas.npy")) +
                             " --p 10 --q 5 --out " + shell_quote(work.file("s.jsonl")));
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const auto expected = novelty::test::json_lines(work.file("s.jsonl"));

    json ideas = json::array();
    const char* extra[] = {"", "2015", "", "", ""};
    const char* ids[] = {"i1", "i2", "i3", "i4", "p7"};
    for (std::size_t i = 0; i < 5; ++i) {
        json idea{{"id", ids[i]}, {"vector", vector_json(vectors, i)}};
        if (*extra[i]) idea["date"] = extra[i];
        if (i == 2) idea["exclude"] = {"p1"};
        ideas.push_back(idea);
    }
    Server server(options());
    server.start();
    const Reply r = post(server.port(), "/v1/score", json{{"ideas", ideas}, {"p", 10}, {"q", 5}}.dump());
    ASSERT_EQ(r.status, 200) << r.text;
    ASSERT_EQ(r.body["results"].size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
        // How each run found the densities (its store, a search) is the one field that may differ.
        json got = r.body["results"][i], want = expected[i];
        got["provenance"].erase("densities_path");
        want["provenance"].erase("densities_path");
        EXPECT_EQ(got, want) << "idea " << i;
    }
    EXPECT_EQ(r.body["results"][4]["provenance"]["excluded"], json::array({"p7"}));  // a corpus paper leaves itself out
}

TEST_F(ServerTest, OneIndexServesEveryRequest) {
    // The corpus is loaded into one search index when the server starts; scoring (several p and
    // q, with split-free HD searches and the densities' self-join) and searching, request after
    // request, never build another one.
    const auto vectors = idea_vectors(4);
    json ideas = json::array();
    for (std::size_t i = 0; i < 4; ++i) ideas.push_back(json{{"id", "i" + std::to_string(i)}, {"vector", vector_json(vectors, i)}});
    Server server(options());
    server.start();
    const std::size_t built = novelty::search_indexes_built();
    for (int round = 0; round < 3; ++round) {
        const Reply score = post(server.port(), "/v1/score",
                                 json{{"ideas", ideas}, {"p", 10 + round}, {"q", 5}, {"cutoff", "2015"}}.dump());
        ASSERT_EQ(score.status, 200) << score.text;
        const Reply search = post(server.port(), "/v1/search", json{{"queries", ideas}, {"k", 7}}.dump());
        ASSERT_EQ(search.status, 200) << search.text;
    }
    EXPECT_EQ(novelty::search_indexes_built(), built);
}

TEST_F(ServerTest, Bf16StorageRepliesAsFloat32StorageDoes) {
    // options.backend.storage = "bf16" (novelty serve --storage bf16): the same search replies, and
    // score replies whose provenance names the storage.
    const auto vectors = idea_vectors(4, 9);
    json ideas = json::array();
    for (std::size_t i = 0; i < 4; ++i) ideas.push_back(json{{"id", "i" + std::to_string(i)}, {"vector", vector_json(vectors, i)}});
    const std::string body = json{{"queries", ideas}, {"k", 12}}.dump();
    Server f32(options());
    f32.start();
    ServerOptions o = options();
    o.backend.storage = "bf16";
    Server bf16(o);
    bf16.start();
    const Reply want = post(f32.port(), "/v1/search", body), got = post(bf16.port(), "/v1/search", body);
    ASSERT_EQ(want.status, 200) << want.text;
    ASSERT_EQ(got.status, 200) << got.text;
    EXPECT_EQ(got.body, want.body);
    const Reply score = post(bf16.port(), "/v1/score", json{{"ideas", ideas}, {"p", 10}, {"q", 5}}.dump());
    ASSERT_EQ(score.status, 200) << score.text;
    EXPECT_EQ(score.body["results"][0]["provenance"]["backend"], "cpu-bf16");
}

TEST_F(ServerTest, SearchRepliesAsTheCliWritesAndKAndCutoffApply) {
    TempDir work;
    const auto vectors = idea_vectors(3, 9);
    novelty::write_npy(work.file("q.npy"), novelty::DType::f32, 3, dim, vectors.data());
    novelty::test::write_file(work.file("q.jsonl"), "{\"id\": \"a\"}\n{\"id\": \"b\", \"date\": \"2004\"}\n{\"id\": \"p3\"}\n");
    const auto cli = run_cli("search -q --corpus " + shell_quote(corpus_dir()) + " --queries " +
                             shell_quote(work.file("q.jsonl")) + " --vectors " + shell_quote(work.file("q.npy")) +
                             " --k 7 --out " + shell_quote(work.file("hits.jsonl")));
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const auto expected = novelty::test::json_lines(work.file("hits.jsonl"));

    json queries = json::array({json{{"id", "a"}, {"vector", vector_json(vectors, 0)}},
                                json{{"id", "b"}, {"vector", vector_json(vectors, 1)}, {"date", "2004"}},
                                json{{"id", "p3"}, {"vector", vector_json(vectors, 2)}}});
    Server server(options());
    server.start();
    const Reply r = post(server.port(), "/v1/search", json{{"queries", queries}, {"k", 7}}.dump());
    ASSERT_EQ(r.status, 200) << r.text;
    ASSERT_EQ(r.body["results"].size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.body["results"][i], expected[i]) << "query " << i;

    // Default k is 10; a top-level cutoff applies to queries without their own date; a query
    // with no vector or text that names a corpus paper searches as that paper, without it.
    const Reply d = post(server.port(), "/v1/search", json{{"queries", {{{"id", "p3"}}}}, {"cutoff", "2001"}}.dump());
    ASSERT_EQ(d.status, 200) << d.text;
    const json& hit = d.body["results"][0];
    EXPECT_EQ(hit["cutoff"], "2001");
    EXPECT_EQ(hit["searchable"], 6);  // years 2000 and 2001: p0, p1, p20, p21, p40, p41
    EXPECT_EQ(hit["neighbors"].size(), 6u);
    for (const auto& n : hit["neighbors"]) EXPECT_NE(n["id"], "p3");
}

TEST_F(ServerTest, MetadataFiltersMatchTheCli) {
    TempDir work;
    const auto vectors = idea_vectors(2, 11);
    novelty::write_npy(work.file("q.npy"), novelty::DType::f32, 2, dim, vectors.data());
    novelty::test::write_file(work.file("q.jsonl"),
                              "{\"id\": \"a\"}\n{\"id\": \"b\", \"filter\": {\"papers\": [\"p2\", \"p4\", \"p6\", \"p7\"]}}\n");
    const auto cli = run_cli("search -q --corpus " + shell_quote(corpus_dir()) + " --queries " +
                             shell_quote(work.file("q.jsonl")) + " --vectors " + shell_quote(work.file("q.npy")) +
                             " --k 5 --min-citations 3 --out " + shell_quote(work.file("hits.jsonl")));
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const auto expected = novelty::test::json_lines(work.file("hits.jsonl"));
    json queries = json::array({json{{"id", "a"}, {"vector", vector_json(vectors, 0)}},
                                json{{"id", "b"}, {"vector", vector_json(vectors, 1)},
                                     {"filter", {{"papers", {"p2", "p4", "p6", "p7"}}}}}});
    Server server(options());
    server.start();
    const Reply r = post(server.port(), "/v1/search",
                         json{{"queries", queries}, {"k", 5}, {"filter", {{"min_citations", 3}}}}.dump());
    ASSERT_EQ(r.status, 200) << r.text;
    for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(r.body["results"][i], expected[i]) << "query " << i;
    EXPECT_LE(r.body["results"][1]["neighbors"].size(), 4u);
    // A bad filter is a 400 naming where it is.
    const Reply bad = post(server.port(), "/v1/search",
                           json{{"queries", queries}, {"filter", {{"colour", "red"}}}}.dump());
    EXPECT_EQ(bad.status, 400);
    EXPECT_NE(bad.text.find("filter"), std::string::npos) << bad.text;
}

TEST_F(ServerTest, TextIsEmbeddedWithTheServersEncoderInOneBatch) {
    std::atomic<int> embed_calls{0};
    ServerOptions o = options();
    o.make_embedder = [&] { return std::make_unique<FakeEmbedder>(&embed_calls); };
    Server server(o);
    server.start();
    const Reply e = post(server.port(), "/v1/embed",
                         json{{"records", {{{"id", "x"}, {"title", "A"}, {"text", "B"}}, {{"id", 5}, {"text", "C"}}}}}.dump());
    ASSERT_EQ(e.status, 200) << e.text;
    EXPECT_EQ(e.body["embedder"], "fake-8");
    EXPECT_EQ(e.body["dim"], dim);
    ASSERT_EQ(e.body["results"].size(), 2u);
    EXPECT_EQ(e.body["results"][0]["id"], "x");
    EXPECT_EQ(e.body["results"][1]["id"], "5");
    const auto expected = FakeEmbedder::vector_of("A\n\nB");
    for (std::size_t c = 0; c < dim; ++c) EXPECT_FLOAT_EQ(e.body["results"][0]["vector"][c].get<float>(), expected[c]);
    EXPECT_EQ(embed_calls.load(), 1);

    // A text idea scores as its embedded vector does.
    const auto v = FakeEmbedder::vector_of("Some idea");
    json as_vector = json::array();
    for (float x : v) as_vector.push_back(x);
    const Reply by_text = post(server.port(), "/v1/score",
                               json{{"ideas", {{{"id", "t"}, {"title", "Some idea"}}}}, {"p", 10}, {"q", 5}}.dump());
    const Reply by_vector = post(server.port(), "/v1/score",
                                 json{{"ideas", {{{"id", "t"}, {"vector", as_vector}}}}, {"p", 10}, {"q", 5}}.dump());
    ASSERT_EQ(by_text.status, 200) << by_text.text;
    ASSERT_EQ(by_vector.status, 200) << by_vector.text;
    json text_body = by_text.body, vector_body = by_vector.body;
    text_body["results"][0]["provenance"].erase("densities_path");  // searched, then read from the store
    vector_body["results"][0]["provenance"].erase("densities_path");
    EXPECT_EQ(text_body, vector_body);
}

// A text idea's score says the precision the server's encoder embedded it at; an idea sent as a
// vector, which no encoder of the server touched, does not.
TEST_F(ServerTest, ScoresOfTextIdeasRecordTheirEmbeddingPrecision) {
    ServerOptions o = options();
    o.make_embedder = [] { return std::make_unique<FakeEmbedder>(nullptr, "int8"); };
    Server server(o);
    server.start();
    json as_vector = json::array();
    for (float x : FakeEmbedder::vector_of("Some idea")) as_vector.push_back(x);
    const Reply by_text = post(server.port(), "/v1/score",
                               json{{"ideas", {{{"id", "t"}, {"title", "Some idea"}}}}, {"p", 10}, {"q", 5}}.dump());
    const Reply by_vector = post(server.port(), "/v1/score",
                                 json{{"ideas", {{{"id", "t"}, {"vector", as_vector}}}}, {"p", 10}, {"q", 5}}.dump());
    ASSERT_EQ(by_text.status, 200) << by_text.text;
    ASSERT_EQ(by_vector.status, 200) << by_vector.text;
    EXPECT_EQ(by_text.body["results"][0]["provenance"]["ideas_embedder_precision"], "int8");
    EXPECT_FALSE(by_vector.body["results"][0]["provenance"].contains("ideas_embedder_precision"));
}

TEST_F(ServerTest, BadRequestsGet400WithAMessageSayingWhatToFix) {
    ServerOptions o = options();
    o.max_records = 4;
    o.max_body_bytes = 4096;
    Server server(o);
    server.start();
    const int port = server.port();
    const auto v = vector_json(idea_vectors(1), 0);
    struct Case {
        std::string path, body, message;
        int status = 400;
    };
    const std::vector<Case> cases = {
        {"/v1/score", "{\"ideas\": [", "not valid JSON"},
        {"/v1/score", "[1, 2]", "must be a JSON object"},
        {"/v1/score", "{}", "ideas: missing"},
        {"/v1/score", "{\"ideas\": {}}", "ideas: must be an array"},
        {"/v1/score", "{\"ideas\": []}", "ideas: is empty"},
        {"/v1/score", json{{"ideas", json::array({{{"id", "a"}}, {{"id", "b"}}, {{"id", "c"}}, {{"id", "d"}}, {{"id", "e"}}})}}.dump(),
         "at most 4"},
        {"/v1/score", json{{"ideas", {{{"title", "x"}}}}}.dump(), "ideas[0]: missing 'id'"},
        {"/v1/score", json{{"ideas", {{{"id", 1.5}}}}}.dump(), "ideas[0]: 'id' must be a string or an integer"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}, {{"id", "a"}, {"vector", v}}}}}.dump(),
         "ideas[1]: 'a' appears twice (first as ideas[0])"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}, {"date", "2019-13"}}}}}.dump(), "ideas[0]: unparseable date '2019-13'"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", {1, 2}}}}}}.dump(), "ideas[0]: 'vector' has 2 numbers"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", std::vector<int>(dim, 0)}}}}}.dump(), "zero vector"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}, {"exclude", "p1"}}}}}.dump(), "ideas[0]: 'exclude' must be an array"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"title", 3}}}}}.dump(), "ideas[0]: 'title' must be a string"},
        {"/v1/score", json{{"ideas", {{{"id", "nope"}}}}}.dump(), "is not the id of a corpus paper"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}}}, {"p", 0}}.dump(), "p: must be an integer from 1 to 2048"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}}}, {"q", 5000}}.dump(), "q: must be an integer from 1 to 2048"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}}}, {"p", "10"}}.dump(), "p: must be an integer"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}}}, {"p", 100}}.dump(), "need more than 100 papers"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}, {"date", "2001"}}}}, {"p", 10}, {"q", 5}}.dump(),
         "the corpus up to 2001 less its exclusions holds 6"},
        {"/v1/search", json{{"queries", {{{"id", "a"}, {"vector", v}}}}, {"k", -1}}.dump(), "k: must be an integer"},
        {"/v1/search", json{{"queries", {{{"id", "a"}, {"vector", v}}}}, {"cutoff", "soon"}}.dump(), "cutoff: 'soon' is not a date"},
        {"/v1/search", json::object().dump(), "queries: missing"},
        {"/v1/search", json{{"ideas", {{{"id", "a"}, {"vector", v}}}}}.dump(),
         "ideas: unknown key (the request takes \"queries\", \"k\", \"cutoff\", \"filter\")"},
        {"/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}}}, {"split", "2020"}}.dump(), "split: unknown key"},
        {"/v1/embed", json{{"records", {{{"id", "a"}, {"text", "x"}}}}, {"k", 3}}.dump(), "k: unknown key"},
        {"/v1/embed", json{{"records", {{{"id", "a"}}}}}.dump(), "records[0]: 'a' has no \"title\" or \"text\""},
        {"/v1/score", std::string(5000, ' '), "larger than the limit of 4096 bytes", 413},
    };
    for (const auto& c : cases) {
        const Reply r = post(port, c.path, c.body);
        EXPECT_EQ(r.status, c.status) << c.body.substr(0, 200) << " -> " << r.text;
        ASSERT_TRUE(r.body.is_object() && r.body.contains("error")) << r.text;
        EXPECT_NE(r.body["error"].get<std::string>().find(c.message), std::string::npos)
            << "expected '" << c.message << "' in: " << r.body["error"];
    }
    // The key at fault is named apart from the message, as the CLI names its flag.
    const Reply bad_k = post(port, "/v1/search", json{{"queries", {{{"id", "a"}, {"vector", v}}}}, {"k", 0}}.dump());
    EXPECT_EQ(bad_k.body.value("parameter", ""), "k") << bad_k.text;
    const Reply bad_vector = post(port, "/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", {1, 2}}}}}}.dump());
    EXPECT_EQ(bad_vector.body.value("parameter", ""), "ideas[0].vector") << bad_vector.text;
    const Reply no_source = post(port, "/v1/score", json{{"ideas", {{{"id", "nope"}}}}}.dump());
    EXPECT_EQ(no_source.body.value("parameter", ""), "ideas[0]") << no_source.text;
    EXPECT_NE(no_source.body.value("error", "").find("; send \"title\", \"text\" or \"vector\""), std::string::npos)
        << no_source.text;
    const Reply duplicate = post(port, "/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}, {{"id", "a"}, {"vector", v}}}}}.dump());
    EXPECT_EQ(duplicate.body.value("parameter", ""), "ideas[1].id") << duplicate.text;
    const Reply unknown = post(port, "/v1/score", json{{"ideas", {{{"id", "a"}, {"vector", v}}}}, {"split", "2020"}}.dump());
    EXPECT_EQ(unknown.body.value("parameter", ""), "split") << unknown.text;
    const Reply no_text = post(port, "/v1/embed", json{{"records", {{{"id", "a"}}}}}.dump());
    EXPECT_EQ(no_text.body.value("parameter", ""), "records[0]") << no_text.text;
    // Unknown routes and wrong methods, as JSON too.
    const Reply missing = get(port, "/v2/nothing");
    EXPECT_EQ(missing.status, 404);
    EXPECT_TRUE(missing.body.contains("error"));
    const Reply wrong_method = get(port, "/v1/score");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_NE(wrong_method.body["error"].get<std::string>().find("use POST"), std::string::npos);
    const Reply no_job = get(port, "/v1/jobs/abc123");
    EXPECT_EQ(no_job.status, 404);
    EXPECT_NE(no_job.body["error"].get<std::string>().find("no job 'abc123'"), std::string::npos);
    // A job is read with GET: another method is 405, not an unknown path (docs/api.md).
    const Reply post_job = post(port, "/v1/jobs/abc123", "{}");
    EXPECT_EQ(post_job.status, 405) << post_job.text;
    EXPECT_NE(post_job.body["error"].get<std::string>().find("use GET"), std::string::npos) << post_job.text;
}

TEST_F(ServerTest, TextWithoutAnEncoderIsRefused) {
    ServerOptions o = options();
    o.make_embedder = nullptr;
    Server server(o);
    server.start();
    const Reply r = post(server.port(), "/v1/search", json{{"queries", {{{"id", "a"}, {"text", "hello"}}}}}.dump());
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.text.find("no encoder for text; send \\\"vector\\\""), std::string::npos) << r.text;
    EXPECT_EQ(r.body.value("parameter", ""), "queries[0]") << r.text;
    EXPECT_EQ(post(server.port(), "/v1/embed", json{{"records", {{{"id", "a"}, {"text", "x"}}}}}.dump()).status, 400);
}

TEST_F(ServerTest, BearerTokenIsRequiredEverywhereButHealthz) {
    ServerOptions o = options();
    o.token = "s3cret-token";
    Server server(o);
    server.start();
    const int port = server.port();
    const std::string body = json{{"queries", {{{"id", "p1"}}}}, {"k", 3}}.dump();
    const Reply none = post(port, "/v1/search", body);
    EXPECT_EQ(none.status, 401);
    EXPECT_NE(none.body["error"].get<std::string>().find("Bearer"), std::string::npos);
    EXPECT_EQ(post(port, "/v1/search", body, "s3cret-tokeN").status, 401);   // same length, one byte off
    EXPECT_EQ(post(port, "/v1/search", body, "s3cret-token2").status, 401);  // a longer one
    EXPECT_EQ(post(port, "/v1/search", body, "s3cret").status, 401);         // a prefix
    EXPECT_EQ(post(port, "/v1/search", body, "s3cret-token").status, 200);
    EXPECT_EQ(get(port, "/metrics").status, 401);
    EXPECT_EQ(get(port, "/metrics", "s3cret-token").status, 200);
    EXPECT_EQ(get(port, "/v1/jobs/abc", "wrong").status, 401);
    EXPECT_EQ(get(port, "/healthz").status, 200);
    // Auth is checked before the body: a bad body without a token is still 401.
    EXPECT_EQ(post(port, "/v1/score", "{broken").status, 401);
}

TEST_F(ServerTest, HealthzAndMetricsReport) {
    Server server(options());
    server.start();
    const int port = server.port();
    const Reply h = get(port, "/healthz");
    ASSERT_EQ(h.status, 200);
    EXPECT_EQ(h.body["status"], "ok");
    EXPECT_EQ(h.body["corpus"]["papers"], 60);
    EXPECT_EQ(h.body["corpus"]["dim"], dim);
    EXPECT_EQ(h.body["corpus"]["identity"].get<std::string>().size(), 64u);
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(post(port, "/v1/search", json{{"queries", {{{"id", "p" + std::to_string(i)}}}}}.dump()).status, 200);
    ASSERT_EQ(post(port, "/v1/search", "{").status, 400);
    httplib::Client client("127.0.0.1", port);
    auto res = client.Get("/metrics");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_NE(res->get_header_value("Content-Type").find("text/plain"), std::string::npos);
    const std::string page = "\n" + res->body;
    EXPECT_EQ(metric(page, "novelty_http_requests_total{endpoint=\"search\",code=\"200\"}"), 3);
    EXPECT_EQ(metric(page, "novelty_http_requests_total{endpoint=\"search\",code=\"400\"}"), 1);
    EXPECT_EQ(metric(page, "novelty_http_request_duration_seconds_count{endpoint=\"search\"}"), 4);
    EXPECT_EQ(metric(page, "novelty_http_request_duration_seconds_bucket{endpoint=\"search\",le=\"+Inf\"}"), 4);
    EXPECT_EQ(metric(page, "novelty_backend_batched_requests_total{kind=\"search\"}"), 3);
    EXPECT_GE(metric(page, "novelty_backend_batches_total{kind=\"search\"}"), 1);
    EXPECT_EQ(metric(page, "novelty_http_requests_in_flight"), 1);  // this request
    EXPECT_EQ(metric(page, "novelty_corpus_papers"), 60);
    EXPECT_NE(page.find("# TYPE novelty_http_request_duration_seconds histogram"), std::string::npos);
}

TEST_F(ServerTest, JobEndpointsCreateJobsThatArePolledUntilDone) {
    Server server(options());
    // A test-only job kind: echoes "value" back, fails when asked to, refuses a body without it.
    server.add_job_endpoint("/v1/test-echo", "test-echo", [](const std::string& body) {
        const json j = json::parse(body, nullptr, false);
        if (!j.is_object() || !j.contains("value")) throw novelty::UsageError("value: missing");
        const bool fail = j.value("fail", false);
        const std::string value = j["value"].dump();
        return std::function<std::string()>([fail, value]() -> std::string {
            if (fail) throw std::runtime_error("asked to fail");
            return "{\"echo\":" + value + "}";
        });
    });
    server.start();
    const int port = server.port();
    auto poll = [&](const std::string& id) {
        Reply r;
        for (int i = 0; i < 2000; ++i) {
            r = get(port, "/v1/jobs/" + id);
            if (r.body["status"] == "done" || r.body["status"] == "failed") break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return r;
    };
    const Reply created = post(port, "/v1/test-echo", "{\"value\": [1, 2]}");
    ASSERT_EQ(created.status, 202) << created.text;
    const std::string id = created.body["id"];
    EXPECT_EQ(created.body["location"], "/v1/jobs/" + id);
    const Reply done = poll(id);
    EXPECT_EQ(done.body["status"], "done");
    EXPECT_EQ(done.body["kind"], "test-echo");
    EXPECT_EQ(done.body["result"], json({{"echo", {1, 2}}}));

    const Reply failing = post(port, "/v1/test-echo", "{\"value\": 1, \"fail\": true}");
    ASSERT_EQ(failing.status, 202);
    const Reply failed = poll(failing.body["id"]);
    EXPECT_EQ(failed.body["status"], "failed");
    EXPECT_EQ(failed.body["error"], "asked to fail");
    EXPECT_FALSE(failed.body.contains("result"));

    const Reply refused = post(port, "/v1/test-echo", "{}");
    EXPECT_EQ(refused.status, 400);
    EXPECT_EQ(refused.body["error"], "value: missing");
    EXPECT_EQ(get(port, "/v1/test-echo").status, 405);
}

TEST_F(ServerTest, SixtyFourConcurrentSingleIdeaRequestsCostFarFewerBackendCalls) {
    auto run = [&](std::size_t max_batch) {
        ServerOptions o = options();
        o.http_threads = 64;
        o.max_batch = max_batch;
        o.max_wait = std::chrono::milliseconds(500);  // room for all 64 to arrive; a full batch goes at once
        Server server(o);
        server.start();
        const auto vectors = idea_vectors(64, 11);
        std::vector<int> statuses(64, 0);
        std::vector<std::thread> clients;
        for (std::size_t i = 0; i < 64; ++i)
            clients.emplace_back([&, i] {
                const json body{{"ideas", {{{"id", "idea-" + std::to_string(i)}, {"vector", vector_json(vectors, i)}}}},
                                {"p", 10}, {"q", 5}};
                const Reply r = post(server.port(), "/v1/score", body.dump());
                statuses[i] = r.status == 200 && r.body["results"][0]["id"] == "idea-" + std::to_string(i) ? 200 : r.status;
                if (r.status != 200) ADD_FAILURE() << r.text;
            });
        for (auto& c : clients) c.join();
        for (int s : statuses) EXPECT_EQ(s, 200);
        EXPECT_EQ(server.batch_counts().score_requests, 64u);
        return server.batch_counts().score_calls;
    };
    EXPECT_LE(run(64), 8u);
    EXPECT_EQ(run(1), 64u);  // batching off: one call per request
}

TEST_F(ServerTest, LoadOnLoopbackLosesAndDuplicatesNothing) {
    // 64 clients x 200 requests (search, and every tenth a score), each checked against the reply
    // expected for its own vector; the reply ids must be exactly the ids sent.
    constexpr std::size_t clients = 64, per_client = 200;
    ServerOptions o = options();
    o.http_threads = 64;
    Server server(o);
    server.start();
    const auto vectors = idea_vectors(16, 21);
    // Expected neighbours of each of the 16 vectors, asked one at a time.
    std::vector<json> expected_search(16), expected_score(16);
    for (std::size_t v = 0; v < 16; ++v) {
        const Reply s = post(server.port(), "/v1/search", json{{"queries", {{{"id", "x"}, {"vector", vector_json(vectors, v)}}}}, {"k", 5}}.dump());
        ASSERT_EQ(s.status, 200);
        expected_search[v] = s.body["results"][0]["neighbors"];
        const Reply r = post(server.port(), "/v1/score", json{{"ideas", {{{"id", "x"}, {"vector", vector_json(vectors, v)}}}}, {"p", 10}, {"q", 5}}.dump());
        ASSERT_EQ(r.status, 200);
        expected_score[v] = r.body["results"][0]["scores"];
    }
    std::mutex mutex;
    std::multiset<std::string> answered;
    std::atomic<std::size_t> errors{0}, mismatches{0};
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            httplib::Client client("127.0.0.1", server.port());
            client.set_read_timeout(60, 0);
            for (std::size_t i = 0; i < per_client; ++i) {
                const std::size_t v = (c * 7 + i) % 16;
                const std::string id = "c" + std::to_string(c) + "-" + std::to_string(i);
                const bool score = i % 10 == 9;
                const json body = score ? json{{"ideas", {{{"id", id}, {"vector", vector_json(vectors, v)}}}}, {"p", 10}, {"q", 5}}
                                        : json{{"queries", {{{"id", id}, {"vector", vector_json(vectors, v)}}}}, {"k", 5}};
                auto res = client.Post(score ? "/v1/score" : "/v1/search", body.dump(), "application/json");
                if (!res || res->status != 200) {
                    ++errors;
                    continue;
                }
                const json r = json::parse(res->body)["results"];
                if (r.size() != 1) ++mismatches;
                const std::string got = r[0][score ? "id" : "query"];
                if (!novelty::test::nearly_equal(score ? r[0]["scores"] : r[0]["neighbors"], score ? expected_score[v] : expected_search[v]))
                    ++mismatches;
                std::lock_guard lock(mutex);
                answered.insert(got);
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(errors.load(), 0u);
    EXPECT_EQ(mismatches.load(), 0u);
    std::multiset<std::string> sent;
    for (std::size_t c = 0; c < clients; ++c)
        for (std::size_t i = 0; i < per_client; ++i) sent.insert("c" + std::to_string(c) + "-" + std::to_string(i));
    EXPECT_EQ(answered, sent);
    const auto counts = server.batch_counts();
    EXPECT_EQ(counts.search_requests + counts.score_requests, clients * per_client + 32);
}

TEST_F(ServerTest, StopFinishesRequestsInFlight) {
    ServerOptions o = options();
    o.max_wait = std::chrono::milliseconds(300);  // a request waits in the batcher while we stop
    Server server(o);
    server.start();
    const int port = server.port();
    Reply reply;
    std::thread client([&] { reply = post(port, "/v1/search", json{{"queries", {{{"id", "p5"}}}}, {"k", 4}}.dump()); });
    while (server.in_flight() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.stop();  // returns once the request in flight has been answered
    client.join();
    EXPECT_EQ(reply.status, 200) << reply.text;
    EXPECT_EQ(reply.body["results"][0]["query"], "p5");
    EXPECT_EQ(reply.body["results"][0]["neighbors"].size(), 4u);
    EXPECT_EQ(get(port, "/healthz").status, -1);  // no longer listening
}

TEST_F(ServerTest, CudaDeviceIsRefusedAsByScoreAndTheCorpusIsNeverWritten) {
    ServerOptions o = options();
    o.backend.device = "cuda";
    if (novelty::auto_device() != "cuda") {  // no CUDA compiled in, or no device: refused
        try {
            Server server(o);
            FAIL() << "expected UsageError";
        } catch (const novelty::UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("device cuda"), std::string::npos);
            EXPECT_EQ(e.parameter(), "device");
        }
    }
    // A fresh corpus without caches: scoring computes densities in memory, never in its directory.
    TempDir copy;
    std::filesystem::copy(corpus_dir(), copy.file("c"), std::filesystem::copy_options::recursive);
    std::filesystem::remove_all(copy.file("c") + "/cache");
    std::set<std::string> before;
    for (const auto& e : std::filesystem::recursive_directory_iterator(copy.file("c"))) before.insert(e.path().string());
    o = options();
    o.corpus_dir = copy.file("c");
    Server server(o);
    server.start();
    const Reply r = post(server.port(), "/v1/score",
                         json{{"ideas", {{{"id", "a"}, {"vector", vector_json(idea_vectors(1), 0)}, {"date", "2012"}}}},
                              {"p", 10}, {"q", 5}}.dump());
    EXPECT_EQ(r.status, 200) << r.text;
    server.stop();
    std::set<std::string> after;
    for (const auto& e : std::filesystem::recursive_directory_iterator(copy.file("c"))) after.insert(e.path().string());
    EXPECT_EQ(before, after);
}
