// POST /v1/claims on loopback: an offline job whose records equal what `novelty claims` writes
// for the same input, key for key; an LLM job against an in-process fake OpenAI-compatible
// server (also equal to the CLI's records); progress; bad bodies; unknown jobs; auth; and the
// corpus left untouched.
#include "fake_llm_server.hpp"
#include "novelty/util/error.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "novelty_host/claimnov/claims_service.hpp"
#include "novelty_host/server/server.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using novelty::host::ClaimsService;
using novelty::host::ClaimsServiceOptions;
using novelty::host::Server;
using novelty::host::ServerOptions;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using nlohmann::json;

namespace {

namespace fs = std::filesystem;

struct Reply {
    int status = 0;
    json body;
    std::string text;
};

Reply request(int port, const std::string& method, const std::string& path, const std::string& body = "",
              const std::string& token = "") {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res = method == "POST" ? client.Post(path.c_str(), headers, body, "application/json")
                                : client.Get(path.c_str(), headers);
    if (!res) return Reply{-1, json(), "no reply"};
    return Reply{res->status, json::parse(res->body, nullptr, false), res->body};
}

/// Polls a job until it is done or failed (at most about 60 s).
Reply poll(int port, const std::string& id, const std::string& token = "") {
    Reply r;
    for (int i = 0; i < 6000; ++i) {
        r = request(port, "GET", "/v1/jobs/" + id, "", token);
        if (r.status != 200 || r.body["status"] == "done" || r.body["status"] == "failed") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return r;
}

/// Every file under `dir` with its size, to show nothing was written there.
std::set<std::string> listing(const std::string& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        out.insert(e.path().string() + (e.is_regular_file() ? ":" + std::to_string(e.file_size()) : "/"));
    return out;
}

std::string model_dir() { return novelty::test::fixture("encoder/tiny-bert-cls"); }

// Six papers p0..p5 (2010..2015) embedded with the tiny test encoder; built once.
class ServerClaimsTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir();
        std::string papers;
        const char* topics[] = {"graph neural networks for molecules", "speech recognition in noisy rooms",
                                "reinforcement learning for robot grasping", "protein structure prediction",
                                "image segmentation of satellite photos", "machine translation for low-resource languages"};
        for (int i = 0; i < 6; ++i)
            papers += json{{"id", "p" + std::to_string(i)},
                           {"title", std::string("A study of ") + topics[i]},
                           {"abstract", std::string("We propose a new method for ") + topics[i] +
                                            ". We release a benchmark dataset for it. Our approach outperforms baselines by 5%."},
                           {"year", 2010 + i}}
                          .dump() +
                      "\n";
        novelty::test::write_file(tmp_->file("papers.jsonl"), papers);
        auto r = run_cli("corpus import -q --in " + shell_quote(tmp_->file("papers.jsonl")) + " --out " + shell_quote(corpus()));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        r = run_cli("corpus embed -q " + shell_quote(corpus()) + " --embedder " + shell_quote(model_dir()));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    static void TearDownTestSuite() {
        delete tmp_;
        tmp_ = nullptr;
    }
    static std::string corpus() { return tmp_->file("c"); }

    static ServerOptions server_options() {
        ServerOptions o;
        o.corpus_dir = corpus();
        o.port = 0;
        o.threads = 1;
        o.http_threads = 4;
        return o;
    }
    static ClaimsServiceOptions claims_options() {
        ClaimsServiceOptions o;
        o.corpus_dir = corpus();
        o.max_proposals = 4;
        return o;
    }
    static std::shared_ptr<ClaimsService> service(ClaimsServiceOptions o) {
        return std::make_shared<ClaimsService>(std::move(o), novelty::load_builtin_encoder(model_dir()));
    }

    /// Three proposals: a copy of p3, the same with p3 excluded, and one with its own cutoff.
    static json proposals() {
        return json::array(
            {{{"id", "copy"},
              {"title", "A study of protein structure prediction"},
              {"text", "We propose a new method for protein structure prediction. We release a benchmark dataset for it."}},
             {{"id", "hidden"},
              {"title", "A study of protein structure prediction"},
              {"text", "We propose a new method for protein structure prediction."},
              {"exclude", {"p3"}}},
             {{"id", "early"}, {"title", "Cooking"}, {"abstract", "We propose a recipe for bread."}, {"date", "2011"}}});
    }
    /// The proposals as a JSON Lines file for the CLI.
    static std::string proposals_file(const std::string& name) {
        std::string text;
        for (const auto& p : proposals()) text += p.dump() + "\n";
        novelty::test::write_file(tmp_->file(name), text);
        return tmp_->file(name);
    }

    static TempDir* tmp_;
};
TempDir* ServerClaimsTest::tmp_ = nullptr;

TEST_F(ServerClaimsTest, OfflineJobEqualsTheCliRecordsAndLeavesTheCorpusAlone) {
    const auto before = listing(corpus());
    Server server(server_options());
    novelty::host::add_claims_endpoint(server, service(claims_options()));
    server.start();
    const int port = server.port();

    const json body = {{"proposals", proposals()}, {"cutoff", "2014"}, {"exclude", {"p5"}}};
    const Reply created = request(port, "POST", "/v1/claims", body.dump());
    ASSERT_EQ(created.status, 202) << created.text;
    const Reply done = poll(port, created.body["id"]);
    ASSERT_EQ(done.body["status"], "done") << done.text;
    EXPECT_EQ(done.body["kind"], "claims");
    EXPECT_EQ(done.body["progress"], json({{"stage", "proposals"}, {"done", 3}, {"total", 3}}));
    const json& result = done.body["result"];
    EXPECT_EQ(result["approximate"], true);
    EXPECT_EQ(result["pool"]["papers"], 5);  // rows through 2014; p5 (2015) is past every cutoff
    EXPECT_GT(result["pool"]["extracted_now"].get<int>(), 0);
    ASSERT_EQ(result["results"].size(), 3u);
    const json& copy = result["results"][0];
    EXPECT_EQ(copy["id"], "copy");
    EXPECT_EQ(copy["verdict"]["decision"], "fail");
    EXPECT_EQ(copy["verdict"]["source"], "p3");
    EXPECT_EQ(copy["verdict"]["judge"], "offline-approx");
    EXPECT_EQ(copy["provenance"]["cutoff"], "2014");
    EXPECT_EQ(result["results"][2]["provenance"]["cutoff"], "2011");
    for (const auto& c : result["results"][1]["claims"])
        for (const auto& cand : c["candidates"]) EXPECT_NE(cand["paper"], "p3");

    // A second job finds the pool claims in the service's store: nothing is extracted again.
    const Reply again = poll(port, request(port, "POST", "/v1/claims", body.dump()).body["id"]);
    ASSERT_EQ(again.body["status"], "done") << again.text;
    EXPECT_EQ(again.body["result"]["pool"]["extracted_now"], 0);
    EXPECT_EQ(again.body["result"]["results"], result["results"]);
    server.stop();
    EXPECT_EQ(listing(corpus()), before) << "the server wrote into the corpus directory";

    // The CLI on the same input writes the same records, key for key.
    const std::string out = tmp_->file("cli_offline.jsonl");
    const auto r = run_cli("claims -q --corpus " + shell_quote(corpus()) + " --proposals " +
                           shell_quote(proposals_file("offline.jsonl")) + " --cutoff 2014 --exclude p5 --embedder " +
                           shell_quote(model_dir()) + " --claims-cache " + shell_quote(tmp_->file("cli_claims.sqlite")) +
                           " --cache none --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(out);
    ASSERT_EQ(lines.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(result["results"][i], lines[i]) << "record " << i;
}

TEST_F(ServerClaimsTest, LlmJobThroughAFakeServerEqualsTheCliAndTheRuleJudgeCanBeAskedFor) {
    novelty::test::FakeLlmServer llm;
    ClaimsServiceOptions o = claims_options();
    o.llm.llm = llm.base_url();
    o.llm.llm_model = "fake-model";  // the judge is the LLM by default (no "judge" setting)
    o.llm.judge_view.max_candidates = 3;
    o.method.alpha = 0.25;
    o.method.weights = "methodology=0.7";
    o.llm.concurrency = 3;
    o.llm.concurrency_given = true;
    o.llm.retries = 0;
    Server server(server_options());
    auto claims = service(o);
    EXPECT_FALSE(claims->approximate());
    novelty::host::add_claims_endpoint(server, claims);
    server.start();
    const int port = server.port();

    json with_own_pool = proposals();
    with_own_pool[2]["pool"] = {"p0", "p2"};  // "early" (cutoff 2011) has its own pool: p0 only is visible
    const json body = {{"proposals", with_own_pool}, {"pool", {"p0", "p1", "p2", "p3", "p4"}}};
    const Reply done = poll(port, request(port, "POST", "/v1/claims", body.dump()).body["id"]);
    ASSERT_EQ(done.body["status"], "done") << done.text;
    const json& result = done.body["result"];
    EXPECT_EQ(result["approximate"], false);
    EXPECT_EQ(result["pool"]["papers"], 5);
    const json& copy = result["results"][0];
    EXPECT_EQ(copy["stages"]["extractor"], "llm:fake-model");
    EXPECT_EQ(copy["stages"]["judge"], "llm:fake-model");
    EXPECT_EQ(copy["verdict"]["judge"], "llm:fake-model");
    EXPECT_EQ(copy["verdict"]["decision"], "fail");
    EXPECT_EQ(copy["verdict"]["source"], "p3");
    EXPECT_EQ(result["results"][1]["verdict"]["decision"], "pass");
    EXPECT_EQ(copy["provenance"]["alpha"], 0.25);
    EXPECT_EQ(copy["provenance"]["weights"]["methodology"], 0.7);
    EXPECT_EQ(copy["provenance"]["weights"]["problem"], 0.4);
    EXPECT_EQ(copy["stages"]["judge_view"]["max_candidates"], 3);
    const json& early = result["results"][2];
    EXPECT_EQ(early["provenance"]["pool_papers"], 2);
    for (const auto& c : early["claims"])
        for (const auto& cand : c["candidates"]) EXPECT_EQ(cand["paper"], "p0") << cand;
    for (const auto& b : llm.bodies()) {
        if (b["messages"][0]["content"].get<std::string>().find("novel enough") == std::string::npos) continue;
        const std::string user = b["messages"][1]["content"];
        for (const auto& c : json::parse(user.substr(user.find('{')))["claims"]) EXPECT_LE(c["candidates"].size(), 3u);
    }
    EXPECT_GT(llm.n_requests(), 5u);
    EXPECT_LE(llm.max_in_flight(), 3);

    // The same request asking for the rule judge: no verdict calls, the rule decides.
    const std::size_t calls_before = llm.n_requests();
    json rule_body = body;
    rule_body["judge"] = "rule";
    const Reply ruled = poll(port, request(port, "POST", "/v1/claims", rule_body.dump()).body["id"]);
    ASSERT_EQ(ruled.body["status"], "done") << ruled.text;
    EXPECT_EQ(ruled.body["result"]["results"][0]["verdict"]["judge"], "rule");
    EXPECT_EQ(ruled.body["result"]["results"][0]["stages"]["judge"], "rule");
    EXPECT_EQ(ruled.body["result"]["pool"]["extracted_now"], 0);
    for (std::size_t i = calls_before; i < llm.bodies().size(); ++i)
        EXPECT_EQ(llm.bodies()[i]["messages"][0]["content"].get<std::string>().find("novel enough"), std::string::npos);
    server.stop();

    // The CLI against the same fake server writes the same records.
    novelty::test::write_file(tmp_->file("pool.txt"), "p0\np1\np2\np3\np4\n");
    const std::string out = tmp_->file("cli_llm.jsonl");
    std::string own_pool_lines;
    for (const auto& p : with_own_pool) own_pool_lines += p.dump() + "\n";
    novelty::test::write_file(tmp_->file("llm.jsonl"), own_pool_lines);
    const auto r = run_cli("claims -q --corpus " + shell_quote(corpus()) + " --proposals " +
                           shell_quote(tmp_->file("llm.jsonl")) + " --pool " + shell_quote(tmp_->file("pool.txt")) +
                           " --llm " + shell_quote(llm.base_url()) + " --llm-model fake-model --retries 0" +
                           " --judge-candidates 3 --alpha 0.25 --weights methodology=0.7" +
                           " --embedder " + shell_quote(model_dir()) + " --claims-cache " +
                           shell_quote(tmp_->file("cli_llm_claims.sqlite")) + " --cache none --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(out);
    ASSERT_EQ(lines.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(novelty::test::nearly_equal(result["results"][i], lines[i])) << result["results"][i] << "\n" << lines[i];
}

TEST_F(ServerClaimsTest, BadBodiesGet400NamingTheFieldAndUnknownJobs404) {
    Server server(server_options());
    novelty::host::add_claims_endpoint(server, service(claims_options()));
    server.start();
    const int port = server.port();
    const json one = json::array({{{"id", "a"}, {"title", "t"}}});
    const std::pair<std::string, std::string> cases[] = {
        {"{not json", "not valid JSON"},
        {"[1, 2]", "must be a JSON object"},
        {"{}", "proposals: missing"},
        {R"({"proposals": {}})", "proposals: must be an array"},
        {R"({"proposals": []})", "proposals: is empty"},
        {json{{"proposals", json::array({{{"id", "a"}}})}}.dump(), "proposals[0]: has no \"title\" or \"text\""},
        {json{{"proposals", json::array({{{"id", "a"}, {"title", "t"}}, {{"id", "a"}, {"title", "u"}}})}}.dump(),
         "proposals[1]: 'a' appears twice"},
        {json{{"proposals", json::array({{{"id", "a"}, {"title", "t"}, {"date", "soon"}}})}}.dump(),
         "proposals[0]: unparseable date 'soon'"},
        {json{{"proposals", json::array({1, 2, 3, 4, 5})}}.dump(), "at most 4"},
        {json{{"proposals", one}, {"cutoff", "2020-13"}}.dump(), "cutoff"},
        {json{{"proposals", one}, {"exclude", "p1"}}.dump(), "exclude: must be an array"},
        {json{{"proposals", one}, {"pool", {"p1", "nope"}}}.dump(), "pool[1]: paper 'nope' is not in the corpus"},
        {json{{"proposals", one}, {"pool", json::array()}}.dump(), "pool: is empty"},
        {json{{"proposals", json::array({{{"id", "a"}, {"title", "t"}, {"pool", {"p1", "nope"}}}})}}.dump(),
         "proposals[0].pool[1]: paper 'nope' is not in the corpus"},
        {json{{"proposals", json::array({{{"id", "a"}, {"title", "t"}, {"pool", "p1"}}})}}.dump(),
         "proposals[0].pool: must be an array"},
        {json{{"proposals", one}, {"judge", "llm"}}.dump(), "judge: 'llm' needs a server started with --llm"},
        {json{{"proposals", one}, {"judge", "maybe"}}.dump(), "judge: must be \"llm\" or \"rule\""},
        // Issue 22: a "judge" nested 100,000 levels deep crashed the server (stack overflow).
        {R"({"proposals": [{"id": "a", "title": "t"}], "judge": )" + std::string(100000, '[') +
             std::string(100000, ']') + "}",
         "nested deeper than 128 levels"},
    };
    for (const auto& [body, message] : cases) {
        const Reply r = request(port, "POST", "/v1/claims", body);
        EXPECT_EQ(r.status, 400) << body;
        EXPECT_NE(r.body.value("error", "").find(message), std::string::npos) << body << " -> " << r.text;
    }
    // The key at fault is also named on its own, as for /v1/score and /v1/search (docs/api.md).
    const Reply bad_judge = request(port, "POST", "/v1/claims", json{{"proposals", one}, {"judge", "maybe"}}.dump());
    EXPECT_EQ(bad_judge.body.value("parameter", ""), "judge") << bad_judge.text;
    const Reply unknown_key = request(port, "POST", "/v1/claims", json{{"proposals", one}, {"threshold", 0.3}}.dump());
    EXPECT_EQ(unknown_key.status, 400) << unknown_key.text;
    EXPECT_EQ(unknown_key.body.value("parameter", ""), "threshold") << unknown_key.text;
    EXPECT_NE(unknown_key.body.value("error", "").find("unknown key"), std::string::npos) << unknown_key.text;
    const Reply bad_pool = request(
        port, "POST", "/v1/claims",
        json{{"proposals", json::array({{{"id", "a"}, {"title", "t"}, {"pool", {"p1", "nope"}}}})}}.dump());
    EXPECT_EQ(bad_pool.body.value("parameter", ""), "proposals[0].pool[1]") << bad_pool.text;
    const Reply unknown = request(port, "GET", "/v1/jobs/0123456789abcdef0123456789abcdef");
    EXPECT_EQ(unknown.status, 404);
    EXPECT_NE(unknown.body.value("error", "").find("no job"), std::string::npos);
    EXPECT_EQ(request(port, "GET", "/v1/claims").status, 405);
}

TEST_F(ServerClaimsTest, AuthGuardsTheEndpointAndItsJobs) {
    ServerOptions so = server_options();
    so.token = "s3cret";
    Server server(so);
    novelty::host::add_claims_endpoint(server, service(claims_options()));
    server.start();
    const int port = server.port();
    const std::string body = json{{"proposals", json::array({{{"id", "a"}, {"title", "Protein structure"}}})}}.dump();
    EXPECT_EQ(request(port, "POST", "/v1/claims", body).status, 401);
    EXPECT_EQ(request(port, "POST", "/v1/claims", body, "wrong").status, 401);
    const Reply created = request(port, "POST", "/v1/claims", body, "s3cret");
    ASSERT_EQ(created.status, 202) << created.text;
    EXPECT_EQ(request(port, "GET", "/v1/jobs/" + created.body["id"].get<std::string>()).status, 401);
    EXPECT_EQ(poll(port, created.body["id"], "s3cret").body["status"], "done");
}

TEST_F(ServerClaimsTest, CachesInsideTheCorpusAndAMismatchedEncoderAreRefused) {
    const auto before = listing(corpus());
    ClaimsServiceOptions o = claims_options();
    o.claims_cache = corpus() + "/cache/claims.sqlite";
    EXPECT_THROW(service(o), novelty::UsageError);
    o = claims_options();
    o.llm.response_cache = corpus() + "/../c/llm.sqlite";
    EXPECT_THROW(service(o), novelty::UsageError);
    EXPECT_EQ(listing(corpus()), before);

    class Other : public novelty::Embedder {
    public:
        std::string name() const override { return "other"; }
        std::size_t dim() const override { return 16; }
        std::string pooling() const override { return "mean"; }
        std::vector<float> embed(const std::vector<std::string>& t) override { return std::vector<float>(t.size() * 16, 0.25f); }
    };
    EXPECT_THROW(ClaimsService(claims_options(), std::make_unique<Other>()), novelty::UsageError);
}

TEST_F(ServerClaimsTest, ServeTakesTheClaimsFlagsAndRefusesACacheInTheCorpus) {
    const auto inside = run_cli("serve --corpus " + shell_quote(corpus()) + " --port 0 --embedder " +
                                shell_quote(model_dir()) + " --claims-cache " + shell_quote(corpus() + "/claims.sqlite"));
    EXPECT_EQ(inside.exit_code, 2);
    EXPECT_NE(inside.err.find("read-only"), std::string::npos) << inside.err;

    const std::string log = tmp_->file("serve.log"), store = tmp_->file("serve_claims.sqlite");
    const std::string model = model_dir(), dir = corpus();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        FILE* err = std::freopen(log.c_str(), "w", stderr);
        (void)err;
        execl(NOVELTY_CLI_PATH, "novelty", "serve", "--corpus", dir.c_str(), "--port", "0", "--threads", "1", "--embedder",
              model.c_str(), "--claims-cache", store.c_str(), "--threshold", "0.9", static_cast<char*>(nullptr));
        _exit(127);
    }
    int port = 0;
    const std::regex address(R"(http://127\.0\.0\.1:(\d+))");
    for (int i = 0; i < 3000 && port == 0; ++i) {
        std::smatch m;
        std::string text;
        try {
            text = novelty::test::read_file(log);
        } catch (const std::exception&) {  // not created yet
        }
        if (std::regex_search(text, m, address)) port = std::stoi(m[1]);
        else std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(port, 0) << novelty::test::read_file(log);
    const Reply created = request(port, "POST", "/v1/claims", json{{"proposals", proposals()}}.dump());
    ASSERT_EQ(created.status, 202) << created.text;
    const Reply done = poll(port, created.body["id"]);
    EXPECT_EQ(done.body["status"], "done") << done.text;
    EXPECT_EQ(done.body["result"]["results"].size(), 3u);
    EXPECT_EQ(done.body["result"]["approximate"], true);
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(fs::exists(store)) << "--claims-cache was not used";
    EXPECT_NE(novelty::test::read_file(log).find("offline stages"), std::string::npos) << novelty::test::read_file(log);
}

}  // namespace
