// novelty triage end to end on a small corpus: one record per input idea whatever fails (an
// idea RND cannot score, empty texts, an LLM that fails every call), inheritance by cluster
// members, the band and budget, and resume.
#include "fake_llm_server.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <map>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using json = nlohmann::json;

namespace {

struct TriageFixture {
    TempDir tmp;
    std::string corpus, ideas;

    TriageFixture() {
        const char* topics[] = {"graph neural networks for molecules", "speech recognition in noisy rooms",
                                "reinforcement learning for robot grasping", "protein structure prediction",
                                "image segmentation of satellite photos", "machine translation for low-resource languages",
                                "weather forecasting with transformers", "fraud detection in bank transfers"};
        const char* angles[] = {"A study of ", "Scaling ", "Benchmarks for "};
        std::string papers;
        int n = 0;
        for (const char* angle : angles)
            for (const char* topic : topics) {
                papers += json{{"id", "p" + std::to_string(n)},
                               {"title", std::string(angle) + topic},
                               {"abstract", std::string("We propose a new method for ") + topic +
                                                ". Our approach outperforms baselines by 5%."},
                               {"year", 2000 + n % 20}}
                              .dump() +
                          "\n";
                ++n;
            }
        novelty::test::write_file(tmp.file("papers.jsonl"), papers);
        corpus = tmp.file("c");
        auto r = run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(corpus));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        r = run_cli("corpus embed -q " + shell_quote(corpus));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        ideas = tmp.file("ideas.jsonl");
        auto idea = [](const std::string& id, const std::string& title, const std::string& text) {
            json j{{"id", id}};
            if (!title.empty()) j["title"] = title;
            if (!text.empty()) j["text"] = text;
            return j;
        };
        std::string text;
        text += idea("dup1", "Graph neural networks for molecule property prediction", "We predict molecule properties with GNNs.").dump() + "\n";
        text += idea("bread", "Sourdough starters and the chemistry of bread", "We study how bread rises.").dump() + "\n";
        text += idea("dup2", "Graph neural networks for molecule property prediction", "We predict molecule properties with GNNs.").dump() + "\n";
        text += idea("empty", "", "").dump() + "\n";
        // A cutoff before every paper: RND cannot score it, yet it must appear.
        json early = idea("early", "Robot grasping with reinforcement learning", "Grasping objects.");
        early["date"] = "1990";
        text += early.dump() + "\n";
        text += idea("sat", "Segmenting satellite photos of farms", "Image segmentation for agriculture.").dump() + "\n";
        novelty::test::write_file(ideas, text);
    }

    std::string base() const {
        return "triage -q --device cpu --p 3 --q 3 --corpus " + shell_quote(corpus) + " --ideas " + shell_quote(ideas);
    }
};

std::map<std::string, json> by_id(const std::vector<json>& lines) {
    std::map<std::string, json> out;
    for (const auto& j : lines) out[j["id"].get<std::string>()] = j;
    return out;
}

TEST(TriageCli, EveryIdeaHasARecordAndMembersInherit) {
    TriageFixture f;
    const std::string out = f.tmp.file("t.jsonl");
    auto r = run_cli(f.base() + " --select all --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(out);
    ASSERT_EQ(lines.size(), 6u);
    const char* order[] = {"dup1", "bread", "dup2", "empty", "early", "sat"};
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(lines[i]["id"], order[i]);
    auto ideas = by_id(lines);
    EXPECT_EQ(ideas["dup1"]["role"], "representative");
    EXPECT_EQ(ideas["dup2"]["role"], "member");
    EXPECT_EQ(ideas["dup2"]["inherited"], true);
    EXPECT_EQ(ideas["dup2"]["cluster"]["representative"], "dup1");
    EXPECT_EQ(ideas["dup2"]["verdict"], ideas["dup1"]["verdict"]);
    EXPECT_EQ(ideas["dup2"]["scores"], ideas["dup1"]["scores"]);
    EXPECT_EQ(ideas["dup1"]["checked"], true);
    EXPECT_EQ(ideas["dup1"]["decided_by"], "claimnov");
    EXPECT_EQ(ideas["dup1"]["verdict"]["judge"], "offline-approx");
    EXPECT_EQ(ideas["empty"]["role"], "empty");
    EXPECT_TRUE(ideas["empty"]["verdict"].is_null());
    EXPECT_TRUE(ideas["early"]["scores"].is_null());
    EXPECT_NE(ideas["early"]["error"].get<std::string>().find("rnd:"), std::string::npos) << ideas["early"];
    EXPECT_TRUE(ideas["early"]["verdict"].is_null());
    for (const char* id : {"bread", "sat"}) {
        EXPECT_GE(ideas[id]["scores"]["rnd"].get<double>(), 0.0);
        EXPECT_LE(ideas[id]["scores"]["rnd"].get<double>(), 100.0);
        EXPECT_EQ(ideas[id]["checked"], true);
    }

    // A budget of 0: nothing is checked, the gate decides by the band's middle: RND passes at or
    // above it; a nearest paper at or above it fails the idea and is named its source.
    r = run_cli(f.base() + " --gate rnd --band 0,100 --budget 0 --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ideas = by_id(novelty::test::json_lines(out));
    ASSERT_EQ(ideas.size(), 6u);
    for (const char* id : {"dup1", "bread", "sat"}) {
        EXPECT_EQ(ideas[id]["checked"], false);
        EXPECT_EQ(ideas[id]["decided_by"], "rnd");
        EXPECT_EQ(ideas[id]["verdict"]["decision"], ideas[id]["scores"]["rnd"].get<double>() >= 50 ? "pass" : "fail");
    }
    r = run_cli(f.base() + " --band 0.3,0.5 --budget 0 --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ideas = by_id(novelty::test::json_lines(out));
    for (const char* id : {"dup1", "bread", "sat"}) {
        EXPECT_EQ(ideas[id]["decided_by"], "nearest");
        const bool fails = ideas[id]["scores"]["nearest"]["sim"].get<double>() >= 0.4;
        EXPECT_EQ(ideas[id]["verdict"]["decision"], fails ? "fail" : "pass") << ideas[id];
        EXPECT_EQ(ideas[id]["verdict"]["source"], fails ? ideas[id]["scores"]["nearest"]["id"] : json(nullptr));
    }
    // The default gate checks the ideas whose nearest paper is in its band, and only those.
    r = run_cli(f.base() + " --band 0.3,0.7 --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ideas = by_id(novelty::test::json_lines(out));
    for (const char* id : {"dup1", "bread", "sat"}) {
        const double sim = ideas[id]["scores"]["nearest"]["sim"].get<double>();
        EXPECT_EQ(ideas[id]["checked"], sim >= 0.3 && sim <= 0.7) << ideas[id];
    }
    EXPECT_EQ(run_cli(f.base() + " --band 0,100 --out " + shell_quote(out)).exit_code, 2);  // not a similarity
    // An empty band checks nothing either; --select top takes the highest RND within the budget.
    r = run_cli(f.base() + " --select top --budget 1 --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ideas = by_id(novelty::test::json_lines(out));
    int checked = 0;
    double top_rnd = -1, checked_rnd = -1;
    for (const char* id : {"dup1", "bread", "sat"}) {
        top_rnd = std::max(top_rnd, ideas[id]["scores"]["rnd"].get<double>());
        if (ideas[id]["checked"] == true) {
            ++checked;
            checked_rnd = ideas[id]["scores"]["rnd"].get<double>();
        }
    }
    EXPECT_EQ(checked, 1);
    EXPECT_EQ(checked_rnd, top_rnd);
    EXPECT_EQ(run_cli(f.base() + " --select top --out " + shell_quote(out)).exit_code, 2);
    EXPECT_EQ(run_cli(f.base() + " --band 70,20 --out " + shell_quote(out)).exit_code, 2);
}

TEST(TriageCli, LlmFaultsNeverDropAnIdeaAndResumeRedoesThem) {
    TriageFixture f;
    novelty::test::FakeLlmServer server;
    std::atomic<bool> failing{true};
    server.set_behaviour([&](const json&, httplib::Response& res, int) {
        if (!failing) return false;
        res.status = 500;
        res.set_content("{\"error\": \"injected\"}", "application/json");
        return true;
    });
    const std::string out = f.tmp.file("t.jsonl");
    const std::string llm = " --select all --llm " + server.base_url() + " --llm-model fake --retries 0 --cache none" +
                            " --claims-cache " + shell_quote(f.tmp.file("claims.sqlite"));
    auto r = run_cli(f.base() + llm + " --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto ideas = by_id(novelty::test::json_lines(out));
    ASSERT_EQ(ideas.size(), 6u);
    for (const char* id : {"dup1", "dup2", "bread", "sat"}) {
        EXPECT_EQ(ideas[id]["checked"], false) << ideas[id];
        EXPECT_EQ(ideas[id]["decided_by"], "nearest") << ideas[id];  // the gate decides instead
        EXPECT_NE(ideas[id]["error"].get<std::string>().find("claimnov"), std::string::npos) << ideas[id];
        EXPECT_TRUE(ideas[id]["verdict"].is_object());
    }
    // The LLM recovers: an interrupted run's partial file is resumed, and the failed ideas are redone.
    failing = false;
    std::string partial;
    for (const auto& j : novelty::test::json_lines(out)) partial += j.dump() + "\n";
    novelty::test::write_file(out + ".partial", partial);
    r = run_cli(f.base() + llm + " --out " + shell_quote(out));
    EXPECT_EQ(r.exit_code, 2) << "an existing partial file needs --resume";
    r = run_cli(f.base() + llm + " --resume --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ideas = by_id(novelty::test::json_lines(out));
    ASSERT_EQ(ideas.size(), 6u);
    for (const char* id : {"dup1", "dup2", "bread", "sat"}) {
        EXPECT_EQ(ideas[id]["checked"], true) << ideas[id];
        EXPECT_FALSE(ideas[id].contains("error")) << ideas[id];
    }
    EXPECT_TRUE(ideas["early"].contains("error"));
}

}  // namespace
