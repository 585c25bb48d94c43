// POST /v1/triage on loopback: a job whose records equal what `novelty triage` writes for the
// same ideas and settings, key for key, and bad bodies refused with the field named.
#include "novelty/encoder/text_encoder.hpp"
#include "novelty_host/server/server.hpp"
#include "novelty_host/triage/triage_service.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include "novelty/util/error.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <thread>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using nlohmann::json;

namespace {

struct Reply {
    int status = 0;
    json body;
    std::string text;
};

Reply request(int port, const std::string& method, const std::string& path, const std::string& body = "") {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    auto res = method == "POST" ? client.Post(path.c_str(), body, "application/json") : client.Get(path.c_str());
    if (!res) return Reply{-1, json(), "no reply"};
    return Reply{res->status, json::parse(res->body, nullptr, false), res->body};
}

Reply poll(int port, const std::string& id) {
    Reply r;
    for (int i = 0; i < 6000; ++i) {
        r = request(port, "GET", "/v1/jobs/" + id);
        if (r.status != 200 || r.body["status"] == "done" || r.body["status"] == "failed") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return r;
}

std::string model_dir() { return novelty::test::fixture("encoder/tiny-bert-cls"); }

json ideas() {
    return json::array({{{"id", "a"}, {"title", "Graph neural networks for molecules"}, {"text", "We predict toxicity."}},
                        {{"id", "b"}, {"title", "Speech recognition in noisy rooms"}, {"text", "We denoise audio."}},
                        {{"id", "a2"}, {"title", "Graph neural networks for molecules"}, {"text", "We predict toxicity."}},
                        {{"id", "none"}},
                        {{"id", "late"}, {"title", "Protein structure prediction"}, {"text", "Folding."}, {"date", "2001"}}});
}

TEST(ServerTriage, JobEqualsTheCliRecords) {
    TempDir tmp;
    const char* topics[] = {"graph neural networks for molecules", "speech recognition in noisy rooms",
                            "reinforcement learning for robot grasping", "protein structure prediction",
                            "image segmentation of satellite photos", "machine translation for low-resource languages"};
    std::string papers;
    for (int i = 0; i < 18; ++i)
        papers += json{{"id", "p" + std::to_string(i)},
                       {"title", std::string(i < 6 ? "A study of " : i < 12 ? "Scaling " : "Benchmarks for ") + topics[i % 6]},
                       {"abstract", std::string("We propose a new method for ") + topics[i % 6] + ". It works."},
                       {"year", 2000 + i}}
                      .dump() +
                  "\n";
    novelty::test::write_file(tmp.file("papers.jsonl"), papers);
    const std::string corpus = tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(corpus)).exit_code, 0);
    auto r = run_cli("corpus embed -q " + shell_quote(corpus) + " --embedder " + shell_quote(model_dir()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string lines;
    for (const auto& idea : ideas()) lines += idea.dump() + "\n";
    novelty::test::write_file(tmp.file("ideas.jsonl"), lines);
    r = run_cli("triage -q --device cpu --p 3 --q 3 --select all --threshold 0.95 --corpus " + shell_quote(corpus) +
                " --ideas " + shell_quote(tmp.file("ideas.jsonl")) + " --embedder " + shell_quote(model_dir()) +
                " --claims-cache " + shell_quote(tmp.file("cli_claims.sqlite")) + " --out " + shell_quote(tmp.file("t.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto cli = novelty::test::json_lines(tmp.file("t.jsonl"));

    novelty::host::ServerOptions server_options;
    server_options.corpus_dir = corpus;
    server_options.port = 0;
    server_options.threads = 1;
    server_options.http_threads = 4;
    novelty::host::TriageServiceOptions options;
    options.claims.corpus_dir = corpus;
    options.claims.max_proposals = 8;
    options.backend.storage = "bf16";  // novelty serve --storage bf16; the CLI ran with f32: the same records
    auto service = std::make_shared<novelty::host::TriageService>(options, novelty::load_builtin_encoder(model_dir()));
    novelty::host::Server server(server_options);
    novelty::host::add_triage_endpoint(server, service);
    server.start();
    const int port = server.port();

    const json body = {{"ideas", ideas()}, {"select", "all"}, {"p", 3}, {"q", 3}, {"threshold", 0.95}};
    const Reply created = request(port, "POST", "/v1/triage", body.dump());
    ASSERT_EQ(created.status, 202) << created.text;
    const Reply done = poll(port, created.body["id"]);
    ASSERT_EQ(done.body["status"], "done") << done.text;
    EXPECT_EQ(done.body["kind"], "triage");
    const json& result = done.body["result"];
    ASSERT_EQ(result["results"].size(), cli.size());
    for (std::size_t i = 0; i < cli.size(); ++i) EXPECT_EQ(result["results"][i], cli[i]) << i;
    EXPECT_EQ(result["summary"]["ideas"], 5);
    EXPECT_EQ(result["summary"]["empty"], 1);
    EXPECT_EQ(result["results"][2]["cluster"]["representative"], "a");
    EXPECT_EQ(result["results"][3]["role"], "empty");
    EXPECT_TRUE(result["results"][3]["verdict"].is_null());

    for (const json& bad : {json{{"ideas", ideas()}, {"band", {70, 20}}}, json{{"ideas", ideas()}, {"select", "top"}},
                            json{{"ideas", ideas()}, {"threshold", 2}}, json{{"ideas", ideas()}, {"budget", -1}},
                            json{{"ideas", ideas()}, {"gate", "bogus"}}, json{{"ideas", ideas()}, {"band", {0.2, 1.5}}},
                            json{{"ideas", json::array()}}, json{{"ideas", ideas()}, {"budjet", 3}}}) {
        const Reply refused = request(port, "POST", "/v1/triage", bad.dump());
        EXPECT_EQ(refused.status, 400) << bad.dump() << " " << refused.text;
        // The key at fault is named on its own too (docs/api.md), and numbers are quoted as sent.
        std::string key = "ideas";
        for (const auto& [k, v] : bad.items())
            if (k != "ideas") key = k;
        EXPECT_EQ(refused.body.value("parameter", ""), key) << refused.text;
        EXPECT_EQ(refused.text.find("0000000"), std::string::npos) << refused.text;
    }
    server.stop();

    // The storage reaches the service's backend: one the CPU index does not have is refused.
    options.backend.storage = "f16";
    EXPECT_THROW(novelty::host::TriageService(options, novelty::load_builtin_encoder(model_dir())), novelty::UsageError);
}

}  // namespace
