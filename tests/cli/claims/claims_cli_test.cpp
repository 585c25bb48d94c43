// novelty claims offline on a tiny corpus (no network), its resume, and novelty eval claimnov
// reproducing the paper's ClaimNov row from result and label files.
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <utility>
#include <vector>
#include <sstream>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using json = nlohmann::json;

namespace {

}  // namespace

TEST(ClaimsCli, RunsOfflineOnATinyCorpusAndLabelsTheApproximation) {
    TempDir tmp;
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
    novelty::test::write_file(tmp.file("papers.jsonl"), papers);
    const std::string corpus = tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(corpus)).exit_code, 0);
    auto r = run_cli("corpus embed -q " + shell_quote(corpus));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    novelty::test::write_file(
        tmp.file("proposals.jsonl"),
        json{{"id", "copy"}, {"title", "A study of protein structure prediction"},
             {"text", "We propose a new method for protein structure prediction. We release a benchmark dataset for it."}}
                .dump() +
            "\n" +
            json{{"id", "hidden"}, {"title", "A study of protein structure prediction"},
                 {"text", "We propose a new method for protein structure prediction."}, {"exclude", {"p3"}}}
                .dump() +
            "\n" + json{{"id", "early"}, {"title", "Cooking"}, {"text", "We propose a recipe for bread."}, {"date", "2011"}}.dump() +
            "\n");
    const std::string out = tmp.file("claims.jsonl");
    const std::string base = "claims -q --corpus " + shell_quote(corpus) + " --proposals " + shell_quote(tmp.file("proposals.jsonl"));
    r = run_cli(base + " --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(out);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0]["id"], "copy");
    for (const auto& j : lines) {
        EXPECT_EQ(j["approximate"], true);
        EXPECT_EQ(j["verdict"]["judge"], "offline-approx");
        EXPECT_EQ(j["stages"]["grader"], "offline-approx");
        ASSERT_FALSE(j["claims"].empty());
        EXPECT_GE(j["novelty"].get<double>(), 0.0);
        EXPECT_LE(j["novelty"].get<double>(), 1.0);
    }
    EXPECT_EQ(lines[0]["verdict"]["decision"], "fail");
    EXPECT_EQ(lines[0]["verdict"]["source"], "p3");
    for (const auto& c : lines[1]["claims"])
        for (const auto& cand : c["candidates"]) EXPECT_NE(cand["paper"], "p3");
    EXPECT_EQ(lines[2]["provenance"]["cutoff"], "2011");
    for (const auto& c : lines[2]["claims"])
        for (const auto& cand : c["candidates"]) EXPECT_TRUE(cand["paper"] == "p0" || cand["paper"] == "p1") << cand;
    EXPECT_TRUE(std::filesystem::exists(corpus + "/cache/claims.sqlite"));

    // An interrupted run (a partial file holding the first record) resumes with the rest.
    novelty::test::write_file(out + ".partial", lines[0].dump() + "\n{\"id\": \"hidd");
    EXPECT_EQ(run_cli(base + " --out " + shell_quote(out)).exit_code, 2);  // needs --resume
    r = run_cli("claims --corpus " + shell_quote(corpus) + " --proposals " + shell_quote(tmp.file("proposals.jsonl")) +
                " --resume --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("1 from an earlier run"), std::string::npos) << r.err;
    const auto resumed = novelty::test::json_lines(out);
    ASSERT_EQ(resumed.size(), 3u);
    EXPECT_EQ(resumed[0], lines[0]);
    EXPECT_EQ(resumed[1]["id"], "hidden");

    // Metadata filters: with --papers leaving p3 out, the copy no longer finds its source; a
    // record's own filter narrows its pool to the papers it lists.
    novelty::test::write_file(tmp.file("allowed.txt"), "p0\np1\np2\np4\np5\n");
    novelty::test::write_file(
        tmp.file("filtered.jsonl"),
        json{{"id", "copy"}, {"title", "A study of protein structure prediction"},
             {"text", "We propose a new method for protein structure prediction. We release a benchmark dataset for it."}}
                .dump() +
            "\n" +
            json{{"id", "listed"}, {"title", "A study of protein structure prediction"},
                 {"text", "We propose a new method for protein structure prediction."},
                 {"filter", {{"papers", {"p1", "p3"}}}}}
                .dump() +
            "\n");
    r = run_cli("claims -q --corpus " + shell_quote(corpus) + " --proposals " + shell_quote(tmp.file("filtered.jsonl")) +
                " --papers " + shell_quote(tmp.file("allowed.txt")) + " --out " + shell_quote(tmp.file("f.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto filtered = novelty::test::json_lines(tmp.file("f.jsonl"));
    ASSERT_EQ(filtered.size(), 2u);
    EXPECT_NE(filtered[0]["verdict"]["source"], "p3");
    EXPECT_EQ(filtered[0]["provenance"]["filtered"], true);
    for (const auto& c : filtered[0]["claims"])
        for (const auto& cand : c["candidates"]) EXPECT_NE(cand["paper"], "p3") << cand;
    // --papers and the record's own list together leave p1 alone.
    for (const auto& c : filtered[1]["claims"])
        for (const auto& cand : c["candidates"]) EXPECT_EQ(cand["paper"], "p1") << cand;
    EXPECT_EQ(filtered[1]["provenance"]["pool_papers"], 1);

    // A proposal without text is an input error naming the line.
    novelty::test::write_file(tmp.file("bad.jsonl"), "{\"id\": \"a\", \"title\": \"t\"}\n{\"id\": \"b\"}\n");
    r = run_cli("claims -q --corpus " + shell_quote(corpus) + " --proposals " + shell_quote(tmp.file("bad.jsonl")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("bad.jsonl:2"), std::string::npos) << r.err;
}

TEST(EvalClaimNovCli, ReproducesThePapersRowFromFiles) {
    TempDir tmp;
    std::string results, labels;
    auto add = [&](const std::string& id, const std::string& set, bool fail, const std::string& named) {
        results += json{{"id", id}, {"novelty", 0.5}, {"claims", json::array()},
                        {"verdict", {{"decision", fail ? "fail" : "pass"}, {"source", named.empty() ? json(nullptr) : json(named)},
                                     {"established", json::array()}, {"rationale", ""}, {"judge", "rule"}}}}
                       .dump() +
                   "\n";
        labels += json{{"id", id}, {"set", set}, {"source", set == "later_realized" ? json(nullptr) : json("S")}}.dump() + "\n";
    };
    for (int i = 0; i < 380; ++i) add("d" + std::to_string(i), "disguised", i < 367, i < 366 ? "S" : (i < 367 ? "X" : ""));
    for (int i = 0; i < 380; ++i) add("o" + std::to_string(i), "source_out", i < 18, "");
    for (int i = 0; i < 400; ++i) add("l" + std::to_string(i), "later_realized", i < 6, "");
    novelty::test::write_file(tmp.file("r.jsonl"), results);
    novelty::test::write_file(tmp.file("l.jsonl"), labels);
    const auto r = run_cli("eval claimnov --json --results " + shell_quote(tmp.file("r.jsonl")) + " --labels " +
                           shell_quote(tmp.file("l.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["disguised"]["caught"], 367);
    EXPECT_EQ(j["disguised"]["named"], 366);
    EXPECT_EQ(j["source_out"]["rejected"], 18);
    EXPECT_NEAR(j["later_realized"]["rate"].get<double>(), 0.015, 1e-12);
    EXPECT_NEAR(j["j"].get<double>(), 0.95, 0.005);
    EXPECT_NEAR(j["delta"].get<double>(), 0.92, 0.005);
    const auto table = run_cli("eval claimnov --results " + shell_quote(tmp.file("r.jsonl")) + " --labels " +
                               shell_quote(tmp.file("l.jsonl")));
    EXPECT_NE(table.out.find("+0.95"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("+0.92"), std::string::npos) << table.out;
    novelty::test::write_file(tmp.file("bad.jsonl"), "{\"id\": \"d1\", \"set\": \"weird\"}\n");
    const auto bad = run_cli("eval claimnov --results " + shell_quote(tmp.file("r.jsonl")) + " --labels " +
                             shell_quote(tmp.file("bad.jsonl")));
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_NE(bad.err.find("bad.jsonl:1"), std::string::npos) << bad.err;
}

TEST(ClaimsCli, OwnPoolsAlphaAndWeightsAreReadAndBadOnesNamed) {
    TempDir tmp;
    std::string papers;
    for (int i = 0; i < 4; ++i)
        papers += json{{"id", "p" + std::to_string(i)},
                       {"title", "Paper " + std::to_string(i)},
                       {"abstract", "We propose method number " + std::to_string(i) + " for protein folding."},
                       {"year", 2010 + i}}
                      .dump() +
                  "\n";
    novelty::test::write_file(tmp.file("papers.jsonl"), papers);
    const std::string corpus = tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(corpus)).exit_code, 0);
    auto r = run_cli("corpus embed -q " + shell_quote(corpus) + " --embedder " +
                     shell_quote(novelty::test::fixture("encoder/tiny-bert-cls")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    novelty::test::write_file(
        tmp.file("p.jsonl"),
        json{{"id", "own"}, {"title", "Paper 3"}, {"text", "We propose method number 3 for protein folding."}, {"pool", {"p0", "p1"}}}
                .dump() +
            "\n" + json{{"id", "all"}, {"title", "Paper 3"}, {"text", "We propose method number 3 for protein folding."}}.dump() + "\n");
    const std::string base = "claims -q --corpus " + shell_quote(corpus) + " --embedder " +
                             shell_quote(novelty::test::fixture("encoder/tiny-bert-cls")) + " --cache none";
    const std::string out = tmp.file("out.jsonl");
    r = run_cli(base + " --proposals " + shell_quote(tmp.file("p.jsonl")) + " --alpha 0.75 --weights methodology=0.5 --out " +
                shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(out);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0]["provenance"]["pool_papers"], 2);
    EXPECT_EQ(lines[1]["provenance"]["pool_papers"], 4);  // the run's pool: every paper
    std::set<std::string> own, all;
    for (const auto& c : lines[0]["claims"])
        for (const auto& cand : c["candidates"]) own.insert(cand["paper"].get<std::string>());
    for (const auto& c : lines[1]["claims"])
        for (const auto& cand : c["candidates"]) all.insert(cand["paper"].get<std::string>());
    EXPECT_TRUE(own.size() <= 2 && !own.count("p2") && !own.count("p3")) << lines[0];
    EXPECT_TRUE(all.count("p3")) << lines[1];
    EXPECT_EQ(lines[1]["provenance"]["alpha"], 0.75);
    EXPECT_EQ(lines[1]["provenance"]["weights"]["methodology"], 0.5);
    EXPECT_EQ(lines[1]["verdict"]["judge"], "offline-approx");  // no LLM: the rule decides
    // N(P) recomputed from the record with the weights given.
    double a = 0, a_max = 0;
    for (const auto& c : lines[1]["claims"]) {
        const std::string d = c["dimension"];
        const double w = d == "problem" ? 0.4 : d == "methodology" ? 0.5 : d == "resource" ? 0.1 : 0.3;
        a += w * c["importance"].get<double>() * c["anticipation"].get<double>();
        a_max += w * c["importance"].get<double>();
    }
    EXPECT_NEAR(lines[1]["novelty"].get<double>(), a_max > 0 ? 1 - a / a_max : 1.0, 1e-9);

    // A pool naming an unknown paper, an empty pool, and bad constants.
    novelty::test::write_file(tmp.file("bad.jsonl"), "{\"id\": \"a\", \"title\": \"t\"}\n{\"id\": \"b\", \"title\": \"t\", \"pool\": [\"p1\", \"zz\"]}\n");
    r = run_cli(base + " --proposals " + shell_quote(tmp.file("bad.jsonl")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("bad.jsonl:2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'zz'"), std::string::npos) << r.err;
    novelty::test::write_file(tmp.file("empty.jsonl"), "{\"id\": \"b\", \"title\": \"t\", \"pool\": []}\n");
    r = run_cli(base + " --proposals " + shell_quote(tmp.file("empty.jsonl")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("'pool' is empty"), std::string::npos) << r.err;
    for (const std::string flags : {"--alpha 0", "--alpha 2", "--weights idea=1", "--weights problem=-1", "--threshold 3"}) {
        r = run_cli(base + " --proposals " + shell_quote(tmp.file("p.jsonl")) + " " + flags);
        EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.err;
    }
}

TEST(EvalClaimNovCli, ReportsTheRecordsItLeavesOutAndWhy) {
    TempDir tmp;
    const auto verdict = [](const std::string& decision) {
        return json{{"decision", decision}, {"source", nullptr}, {"established", json::array()}, {"rationale", ""}, {"judge", "llm:m"}};
    };
    std::string results;
    results += json{{"id", "d1"}, {"novelty", 0.1}, {"claims", json::array()}, {"verdict", verdict("fail")}}.dump() + "\n";
    results += json{{"id", "d2"}, {"novelty", nullptr}, {"claims", json::array()}, {"verdict", nullptr},
                    {"error", "claim extraction failed: invalid answer after one repair: the answer holds no JSON object"}}
                   .dump() +
               "\n";
    results += json{{"id", "l1"}, {"novelty", 0.9}, {"claims", json::array()}, {"verdict", verdict("pass")}}.dump() + "\n";
    results += json{{"id", "x9"}, {"verdict", nullptr}, {"error", "unlabelled failure"}}.dump() + "\n";
    std::string labels;
    for (const auto& [id, set] : std::vector<std::pair<std::string, std::string>>{
             {"d1", "disguised"}, {"d2", "disguised"}, {"d3", "disguised"}, {"l1", "later_realized"}})
        labels += json{{"id", id}, {"set", set}, {"source", "S"}}.dump() + "\n";
    novelty::test::write_file(tmp.file("r.jsonl"), results);
    novelty::test::write_file(tmp.file("l.jsonl"), labels);
    const std::string args = " --results " + shell_quote(tmp.file("r.jsonl")) + " --labels " + shell_quote(tmp.file("l.jsonl"));
    const auto r = run_cli("eval claimnov --json" + args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["disguised"]["n"], 1);  // d2 and d3 are in no denominator
    EXPECT_EQ(j["labelled"], 4);
    EXPECT_EQ(j["evaluated"], 2);
    EXPECT_EQ(j["left_out"]["n"], 2);
    EXPECT_EQ(j["left_out"]["with_error"], 1);
    EXPECT_EQ(j["left_out"]["without_result"], 1);
    ASSERT_EQ(j["left_out"]["records"].size(), 2u);
    EXPECT_EQ(j["left_out"]["records"][0]["id"], "d2");
    EXPECT_EQ(j["left_out"]["records"][0]["reason"], "error");
    EXPECT_NE(j["left_out"]["records"][0]["error"].get<std::string>().find("claim extraction failed"), std::string::npos);
    EXPECT_EQ(j["left_out"]["records"][1]["id"], "d3");
    EXPECT_EQ(j["left_out"]["records"][1]["reason"], "no result");
    EXPECT_EQ(j["unjudged_results"], 2);  // x9 too, though unlabelled
    EXPECT_NE(r.err.find("2 of 4 labelled ids left out of every rate: 1 with an error result, 1 without a result"),
              std::string::npos)
        << r.err;
    const auto table = run_cli("eval claimnov" + args);
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("left out of every rate"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("d2 (disguised): claim extraction failed"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("d3 (disguised): no result record"), std::string::npos) << table.out;
}
