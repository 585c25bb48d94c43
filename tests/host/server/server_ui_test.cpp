// The web page's side of the server (docs/ui.md, docs/api.md): the static files (embedded and
// from --ui-dir), their security headers, the redirects, --no-ui, and the endpoints the page
// uses: POST /v1/papers, GET /v1/corpus/rnd and POST /v1/score-job.
#include "novelty/io/npy.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/server/server.hpp"
#include "server/ui_api.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

using novelty::host::Server;
using novelty::host::ServerOptions;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using nlohmann::json;

namespace {

constexpr std::size_t dim = 8;

// 60 papers p0..p59 (years 2000..2019; p3 has a DOI, p4 a URL), random 8-d vectors; built once.
class ServerUiTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir();
        std::string records;
        for (int i = 0; i < 60; ++i) {
            records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper " + std::to_string(i) +
                       "\", \"abstract\": \"About " + std::to_string(i) + "\", \"venue\": \"V" + std::to_string(i % 3) +
                       "\", \"year\": " + std::to_string(2000 + i % 20) + ", \"citations\": " + std::to_string(i);
            if (i == 3) records += ", \"doi\": \"https://doi.org/10.1000/xyz3\"";
            if (i == 4) records += ", \"url\": \"https://example.org/p4\"";
            records += "}\n";
        }
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
    static ServerOptions options() {
        ServerOptions o;
        o.corpus_dir = tmp_->file("c");
        o.port = 0;
        o.threads = 1;
        o.http_threads = 4;
        return o;
    }
    static TempDir* tmp_;
};
TempDir* ServerUiTest::tmp_ = nullptr;

httplib::Result get(int port, const std::string& path, const std::string& token = "") {
    httplib::Client client("127.0.0.1", port);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Get(path.c_str(), headers);
}

httplib::Result post(int port, const std::string& path, const std::string& body, const std::string& token = "") {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Post(path.c_str(), headers, body, "application/json");
}

json vector_of(std::size_t i) {
    const auto v = novelty::test::random_unit_rows(1, dim, static_cast<std::uint32_t>(100 + i));
    return json(v);
}

/// Polls a job until it ends (at most a minute).
json wait_job(int port, const std::string& id) {
    for (int i = 0; i < 6000; ++i) {
        auto r = get(port, "/v1/jobs/" + id);
        EXPECT_TRUE(r && r->status == 200);
        if (!r) return json();
        json j = json::parse(r->body);
        if (j["status"] == "done" || j["status"] == "failed") return j;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " did not finish";
    return json();
}

}  // namespace

TEST_F(ServerUiTest, ServesTheEmbeddedFilesWithTheirSecurityHeaders) {
    Server server(options());
    server.start();
    const std::pair<const char*, const char*> files[] = {
        {"index.html", "text/html"}, {"app.js", "text/javascript"}, {"style.css", "text/css"}};
    for (const auto& [name, type] : files) {
        auto r = get(server.port(), std::string("/ui/") + name);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200) << name;
        // The compiled-in copy is the file of web/, byte for byte.
        EXPECT_EQ(r->body, novelty::test::read_file(std::string(NOVELTY_SOURCE_DIR) + "/web/" + name)) << name;
        EXPECT_EQ(r->get_header_value("Content-Type").rfind(type, 0), 0u) << name;
        const std::string csp = r->get_header_value("Content-Security-Policy");
        EXPECT_EQ(csp.rfind("default-src 'self'", 0), 0u) << csp;
        EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
        EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
        EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
        EXPECT_EQ(r->get_header_value("X-Frame-Options"), "DENY");
    }
    auto index = get(server.port(), "/ui/");
    ASSERT_TRUE(index);
    EXPECT_EQ(index->status, 200);
    EXPECT_NE(index->body.find("<script type=\"module\" src=\"app.js\"></script>"), std::string::npos);
    // No inline script: the only script element is the module file.
    EXPECT_EQ(index->body.find("<script>"), std::string::npos);
    auto unknown = get(server.port(), "/ui/secrets.txt");
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->status, 404);
    auto traversal = get(server.port(), "/ui/..%2F..%2Fmanifest.json");
    ASSERT_TRUE(traversal);
    EXPECT_EQ(traversal->status, 404);
    // API replies are nosniff too.
    auto health = get(server.port(), "/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->get_header_value("X-Content-Type-Options"), "nosniff");
}

TEST_F(ServerUiTest, RootRedirectsToThePageWhichNeedsNoToken) {
    ServerOptions o = options();
    o.token = "sesame";
    Server server(o);
    server.start();
    auto root = get(server.port(), "/");
    ASSERT_TRUE(root);
    EXPECT_EQ(root->status, 302);
    EXPECT_EQ(root->get_header_value("Location"), "/ui/");
    auto bare = get(server.port(), "/ui");
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->status, 301);
    EXPECT_EQ(bare->get_header_value("Location"), "/ui/");
    auto page = get(server.port(), "/ui/app.js");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);  // the files hold no data
    auto papers = post(server.port(), "/v1/papers", R"({"ids": ["p1"]})");
    ASSERT_TRUE(papers);
    EXPECT_EQ(papers->status, 401);  // the data does need the token
    auto distribution = get(server.port(), "/v1/corpus/rnd?p=10&q=5");
    ASSERT_TRUE(distribution);
    EXPECT_EQ(distribution->status, 401);
    auto with_token = post(server.port(), "/v1/papers", R"({"ids": ["p1"]})", "sesame");
    ASSERT_TRUE(with_token);
    EXPECT_EQ(with_token->status, 200);
}

TEST_F(ServerUiTest, NoUiServesNeitherThePageNorTheRedirect) {
    ServerOptions o = options();
    o.ui = false;
    Server server(o);
    server.start();
    for (const char* path : {"/", "/ui", "/ui/", "/ui/app.js"}) {
        auto r = get(server.port(), path);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 404) << path;
    }
    auto api = post(server.port(), "/v1/papers", R"({"ids": ["p1"]})");
    ASSERT_TRUE(api);
    EXPECT_EQ(api->status, 200);  // the API stays
}

TEST_F(ServerUiTest, UiDirServesTheFolderReadOnEachRequest) {
    TempDir web;
    novelty::test::write_file(web.file("index.html"), "<p>one</p>");
    novelty::test::write_file(web.file("app.js"), "export {};");
    novelty::test::write_file(web.file("style.css"), "p {}");
    ServerOptions o = options();
    o.ui_dir = web.path().string();
    Server server(o);
    server.start();
    auto first = get(server.port(), "/ui/");
    ASSERT_TRUE(first);
    EXPECT_EQ(first->body, "<p>one</p>");
    novelty::test::write_file(web.file("index.html"), "<p>two</p>");
    auto second = get(server.port(), "/ui/index.html");
    ASSERT_TRUE(second);
    EXPECT_EQ(second->body, "<p>two</p>");
    EXPECT_EQ(second->get_header_value("X-Content-Type-Options"), "nosniff");

    TempDir partial;
    novelty::test::write_file(partial.file("index.html"), "x");
    ServerOptions bad = options();
    bad.ui_dir = partial.path().string();
    try {
        Server refused(bad);
        FAIL() << "a folder without app.js was accepted";
    } catch (const novelty::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("app.js"), std::string::npos) << e.what();
    }
    ServerOptions missing = options();
    missing.ui_dir = partial.file("nope");
    EXPECT_THROW(Server refused(missing), novelty::UsageError);
}

TEST_F(ServerUiTest, PapersGiveTheCorpusMetadataInOrder) {
    Server server(options());
    server.start();
    auto r = post(server.port(), "/v1/papers", R"({"ids": ["p3", "nope", "p4", "p25"], "abstract": true})");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json results = json::parse(r->body)["results"];
    ASSERT_EQ(results.size(), 4u);
    EXPECT_EQ(results[0]["id"], "p3");
    EXPECT_EQ(results[0]["title"], "Paper 3");
    EXPECT_EQ(results[0]["year"], 2003);
    EXPECT_EQ(results[0]["date"], "2003");
    EXPECT_EQ(results[0]["venue"], "V0");
    EXPECT_EQ(results[0]["citations"], 3);
    EXPECT_EQ(results[0]["abstract"], "About 3");
    EXPECT_EQ(results[0]["link"], "https://doi.org/10.1000/xyz3");
    EXPECT_EQ(results[1]["id"], "nope");
    EXPECT_EQ(results[1]["error"], "not in the corpus");
    EXPECT_EQ(results[2]["link"], "https://example.org/p4");
    EXPECT_TRUE(results[3]["link"].is_null());
    EXPECT_EQ(results[3]["row"].get<int>() >= 0, true);

    auto no_abstract = post(server.port(), "/v1/papers", R"({"ids": ["p3"]})");
    ASSERT_TRUE(no_abstract);
    EXPECT_FALSE(json::parse(no_abstract->body)["results"][0].contains("abstract"));
    for (const char* body : {R"({"ids": []})", R"({"ids": "p3"})", R"({"idz": ["p3"]})", R"({"ids": [["p3"]]})",
                             R"({"ids": ["p3"], "abstract": 1})"}) {
        auto bad = post(server.port(), "/v1/papers", body);
        ASSERT_TRUE(bad);
        EXPECT_EQ(bad->status, 400) << body;
        EXPECT_TRUE(json::parse(bad->body).contains("error")) << body;
    }
    auto wrong_method = get(server.port(), "/v1/papers");
    ASSERT_TRUE(wrong_method);
    EXPECT_EQ(wrong_method->status, 405);
}

TEST_F(ServerUiTest, CorpusRndIsEachSampledPaperScoredAsAnIdea) {
    Server server(options());
    server.start();
    auto r = get(server.port(), "/v1/corpus/rnd?p=10&q=5");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json dist = json::parse(r->body);
    EXPECT_EQ(dist["p"], 10);
    EXPECT_EQ(dist["q"], 5);
    EXPECT_EQ(dist["papers"], 60);
    EXPECT_EQ(dist["sample"], 60);  // fewer papers than the sample size: all of them
    ASSERT_EQ(dist["scores"].size(), 60u);
    // Each is what /v1/score says for that paper as an idea (itself left out), sent alone.
    std::vector<double> values;
    for (std::size_t i = 0; i < 60; i += 7) {
        const json& s = dist["scores"][i];
        auto one = post(server.port(), "/v1/score", json{{"ideas", {{{"id", s["id"]}}}}, {"p", 10}, {"q", 5}}.dump());
        ASSERT_TRUE(one);
        ASSERT_EQ(one->status, 200) << one->body;
        EXPECT_NEAR(json::parse(one->body)["results"][0]["scores"]["rnd"].get<double>(), s["rnd"].get<double>(), 1e-9)
            << s["id"];
    }
    for (const auto& s : dist["scores"]) values.push_back(s["rnd"].get<double>());
    std::sort(values.begin(), values.end());
    EXPECT_DOUBLE_EQ(dist["quantiles"]["p50"].get<double>(), values[29]);  // nearest rank: ceil(0.5 * 60) = 30th
    EXPECT_DOUBLE_EQ(dist["quantiles"]["p10"].get<double>(), values[5]);
    // Computed once: the same reply again.
    auto again = get(server.port(), "/v1/corpus/rnd?q=5&p=10");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->body, r->body);
    // Bad parameters, and a corpus too small for the server's default p.
    for (const char* path : {"/v1/corpus/rnd?p=0", "/v1/corpus/rnd?p=ten", "/v1/corpus/rnd?size=3", "/v1/corpus/rnd"}) {
        auto bad = get(server.port(), path);
        ASSERT_TRUE(bad);
        EXPECT_EQ(bad->status, 400) << path << ": " << bad->body;
    }
    auto small = get(server.port(), "/v1/corpus/rnd");
    ASSERT_TRUE(small);
    EXPECT_NE(small->body.find("too few"), std::string::npos) << small->body;
}

TEST_F(ServerUiTest, ScoreJobGivesTheScoreReplyWithProgress) {
    Server server(options());
    server.start();
    json ideas = json::array();
    for (std::size_t i = 0; i < 70; ++i) ideas.push_back({{"id", "i" + std::to_string(i)}, {"vector", vector_of(i)}});
    const json body{{"ideas", ideas}, {"p", 10}, {"q", 5}, {"cutoff", "2019"}};
    auto submitted = post(server.port(), "/v1/score-job", body.dump());
    ASSERT_TRUE(submitted);
    ASSERT_EQ(submitted->status, 202) << submitted->body;
    const json job = wait_job(server.port(), json::parse(submitted->body)["id"]);
    ASSERT_EQ(job["status"], "done") << job.dump();
    EXPECT_EQ(job["kind"], "score");
    EXPECT_EQ(job["progress"]["stage"], "score");
    EXPECT_EQ(job["progress"]["done"], 70);
    EXPECT_EQ(job["progress"]["total"], 70);
    auto direct = post(server.port(), "/v1/score", body.dump());
    ASSERT_TRUE(direct);
    ASSERT_EQ(direct->status, 200);
    const json expected = json::parse(direct->body)["results"];
    const json& got = job["result"]["results"];
    ASSERT_EQ(got.size(), 70u);
    for (std::size_t i = 0; i < 70; ++i) {
        EXPECT_EQ(got[i]["id"], expected[i]["id"]);
        json got_provenance = got[i]["provenance"], want_provenance = expected[i]["provenance"];
        got_provenance.erase("densities_path");  // the job searched what the direct call then read from the store
        want_provenance.erase("densities_path");
        EXPECT_EQ(got_provenance, want_provenance);
        for (const char* key : {"rnd", "hd", "density"})
            EXPECT_NEAR(got[i]["scores"][key].get<double>(), expected[i]["scores"][key].get<double>(), 1e-5) << key;
        EXPECT_EQ(got[i]["neighbors"][0]["id"], expected[i]["neighbors"][0]["id"]);
    }
}

TEST_F(ServerUiTest, ScoreJobRefusesABadBodyAtOnceAndNamesTheIdeaOfAFailedSlice) {
    Server server(options());
    server.start();
    for (const char* bad : {R"({"ideas": []})", R"({"ideas": [{"id": "a", "vector": [1]}]})", R"({"ideas": [{"id": "a"}], "pp": 3})",
                            R"({"ideas": [{"id": "p1"}], "cutoff": "2019-13"})", "not json"}) {
        auto r = post(server.port(), "/v1/score-job", bad);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
    }
    // Idea 66 (in the second slice of 64) has a date before every paper: the job fails naming it.
    json ideas = json::array();
    for (std::size_t i = 0; i < 70; ++i) {
        json idea{{"id", "i" + std::to_string(i)}, {"vector", vector_of(i)}};
        if (i == 66) idea["date"] = "1990";
        ideas.push_back(idea);
    }
    auto submitted = post(server.port(), "/v1/score-job", json{{"ideas", ideas}, {"p", 10}, {"q", 5}}.dump());
    ASSERT_TRUE(submitted);
    ASSERT_EQ(submitted->status, 202);
    const json job = wait_job(server.port(), json::parse(submitted->body)["id"]);
    ASSERT_EQ(job["status"], "failed");
    EXPECT_EQ(job["error"].get<std::string>().rfind("ideas[66]", 0), 0u) << job["error"];
}

TEST(PaperLink, PrefersTheDoiThenArxivThenAUrlThenPubmed) {
    using novelty::host::detail::paper_link;
    EXPECT_EQ(paper_link("x", R"({"doi": "10.1/abc", "url": "https://e.org"})"), "https://doi.org/10.1/abc");
    EXPECT_EQ(paper_link("x", R"({"doi": "https://doi.org/10.1/abc"})"), "https://doi.org/10.1/abc");
    EXPECT_EQ(paper_link("x", R"({"externalids": {"ArXiv": "2101.00001"}})"), "https://arxiv.org/abs/2101.00001");
    EXPECT_EQ(paper_link("0704.0001", R"({"versions": [], "categories": "cs.LG"})"), "https://arxiv.org/abs/0704.0001");
    EXPECT_EQ(paper_link("x", R"({"url": "https://e.org/p"})"), "https://e.org/p");
    EXPECT_EQ(paper_link("x", R"({"pmid": "123"})"), "https://pubmed.ncbi.nlm.nih.gov/123/");
    EXPECT_EQ(paper_link("https://openalex.org/W1", "{}"), "https://openalex.org/W1");
    // Never a script or data link, never one with blanks or quotes, nothing from bad JSON.
    EXPECT_EQ(paper_link("x", R"j({"url": "javascript:alert(1)"})j"), "");
    EXPECT_EQ(paper_link("javascript:alert(1)", "{}"), "");
    EXPECT_EQ(paper_link("x", R"({"url": "https://e.org/\" onclick=\"x"})"), "");
    EXPECT_EQ(paper_link("x", R"({"pmid": "12a"})"), "");
    EXPECT_EQ(paper_link("x", "not json"), "");
}
