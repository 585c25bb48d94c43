// novelty dedup end to end: text ideas embedded with the built-in encoder, given vectors, an
// archive, empty texts, and the errors that name the file and line.
#include "json_lines.hpp"
#include "test_util.hpp"

#include "novelty/io/npy.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using json = nlohmann::json;

namespace {

std::string line(const std::string& id, const std::string& title, const std::string& text = "") {
    json j{{"id", id}};
    if (!title.empty()) j["title"] = title;
    if (!text.empty()) j["text"] = text;
    return j.dump() + "\n";
}

// Every idea id of a dedup output, each exactly once.
std::multiset<std::string> all_ids(const std::vector<json>& clusters) {
    std::multiset<std::string> ids;
    for (const auto& c : clusters)
        for (const auto& m : c["members"]) ids.insert(m["id"].get<std::string>());
    return ids;
}

TEST(DedupCli, TextIdeasClusterWithAnArchiveAndEmptyTexts) {
    TempDir tmp;
    const std::string ideas = tmp.file("ideas.jsonl");
    novelty::test::write_file(
        ideas, line("a", "Graph neural networks for predicting molecule toxicity") +
                   line("b", "Reinforcement learning for robot grasping of soft objects") +
                   line("c", "Graph neural networks for predicting molecule toxicity") +  // exact copy of a
                   line("empty1", "") + line("empty2", "") +
                   line("d", "Using graph neural networks to predict the toxicity of molecules") +
                   line("e", "A survey of bread baking techniques in medieval Europe"));
    const std::string archive = tmp.file("archive.jsonl");
    novelty::test::write_file(archive, line("old1", "Robot grasping of soft objects with reinforcement learning") +
                                           line("old2", "Quantum error correction codes"));
    const std::string out = tmp.file("clusters.jsonl");
    auto r = run_cli("dedup -q --device cpu --ideas " + shell_quote(ideas) + " --against " + shell_quote(archive) +
                     " --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto clusters = novelty::test::json_lines(out);
    EXPECT_EQ(all_ids(clusters), (std::multiset<std::string>{"a", "b", "c", "empty1", "empty2", "d", "e"}));
    // a, c (identical) and d (a paraphrase) are one cluster, numbered first; the representative is
    // the most central, ties to the earlier idea.
    ASSERT_GE(clusters.size(), 1u);
    const json& first = clusters[0];
    EXPECT_EQ(first["cluster"], 0);
    std::set<std::string> members;
    for (const auto& m : first["members"]) members.insert(m["id"].get<std::string>());
    EXPECT_TRUE(members.count("a") && members.count("c")) << first;
    EXPECT_EQ(first["members"][0]["id"], "a");
    EXPECT_NEAR(first["members"][1]["sim"].get<double>(), 1.0, 1e-5);
    // Empty texts are singletons, never linked to each other.
    int empties = 0;
    for (const auto& c : clusters)
        for (const auto& m : c["members"])
            if (m.value("empty", false)) {
                ++empties;
                EXPECT_EQ(c["size"], 1);
                EXPECT_TRUE(m["mean_sim"].is_null());
                EXPECT_TRUE(m["archive"].is_null());
            }
    EXPECT_EQ(empties, 2);
    // b repeats old1; e repeats nothing.
    for (const auto& c : clusters)
        for (const auto& m : c["members"]) {
            if (m["id"] == "b") {
                ASSERT_TRUE(m["archive"].is_object()) << m;
                EXPECT_EQ(m["archive"]["id"], "old1");
                EXPECT_GE(m["archive"]["sim"].get<double>(), 0.8);
            }
            if (m["id"] == "e") EXPECT_TRUE(m["archive"].is_null());
        }
    // --representative first and a threshold of 1.0 on the same ideas: only the exact copies join.
    r = run_cli("dedup -q --device cpu --ideas " + shell_quote(ideas) + " --threshold 0.9999 --representative first --out " +
                shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto strict = novelty::test::json_lines(out);
    EXPECT_EQ(strict.size(), 6u);
    EXPECT_EQ(strict[0]["representative"], "a");
    EXPECT_EQ(strict[0]["size"], 2);
}

TEST(DedupCli, GivenVectorsAndNpyIdeas) {
    TempDir tmp;
    // Rows 0 and 2 are near-copies (cosine ~0.995), row 1 far from both, row 3 a copy of row 1.
    const std::vector<float> v = {1, 0, 0, 0, 0, 1, 0, 0, 0.995f, 0.0999f, 0, 0, 0, 2, 0, 0};
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 4, 4, v.data());
    auto r = run_cli("dedup -q --device cpu --ideas " + shell_quote(tmp.file("v.npy")) + " --out " + shell_quote(tmp.file("o.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto clusters = novelty::test::json_lines(tmp.file("o.jsonl"));
    ASSERT_EQ(clusters.size(), 2u);
    EXPECT_EQ(clusters[0]["members"][0]["id"], "0");
    EXPECT_EQ(clusters[0]["members"][1]["id"], "2");
    EXPECT_EQ(clusters[1]["members"][1]["line"], 4);
    // The same vectors beside a .jsonl whose records have no text: the vectors decide.
    novelty::test::write_file(tmp.file("ids.jsonl"), line("w", "") + line("x", "") + line("y", "") + line("z", ""));
    r = run_cli("dedup -q --device cpu --ideas " + shell_quote(tmp.file("ids.jsonl")) + " --vectors " +
                shell_quote(tmp.file("v.npy")) + " --out " + shell_quote(tmp.file("o.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    clusters = novelty::test::json_lines(tmp.file("o.jsonl"));
    ASSERT_EQ(clusters.size(), 2u);
    EXPECT_EQ(clusters[1]["representative"], "x");
}

TEST(DedupCli, BadInputNamesTheProblem) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("bad.jsonl"), line("a", "x") + "{\"id\": \"b\", \"title\": }\n");
    auto r = run_cli("dedup -q --device cpu --ideas " + shell_quote(tmp.file("bad.jsonl")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("bad.jsonl"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bad.jsonl:2"), std::string::npos) << r.err;
    r = run_cli("dedup -q --device cpu --ideas " + shell_quote(tmp.file("bad.jsonl")) + " --threshold 1.5");
    EXPECT_EQ(r.exit_code, 2) << r.err;
#if !defined(NOVELTY_WITH_CUDA)
    // --device cuda in a CPU-only build is a usage error, as for the other commands.
    const std::vector<float> unit = {1, 0, 0, 0, 1, 0};
    novelty::write_npy(tmp.file("unit.npy"), novelty::DType::f32, 2, 3, unit.data());
    r = run_cli("dedup -q --device cuda --ideas " + shell_quote(tmp.file("unit.npy")));
    EXPECT_EQ(r.exit_code, 2) << r.err;
#endif
    const std::vector<float> v = {1, 0, 0, 0, 0, 0};
    novelty::write_npy(tmp.file("zero.npy"), novelty::DType::f32, 2, 3, v.data());
    r = run_cli("dedup -q --device cpu --ideas " + shell_quote(tmp.file("zero.npy")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("row 1 is a zero vector"), std::string::npos) << r.err;
    // An archive whose vectors do not match the ideas' dimension.
    novelty::write_npy(tmp.file("ok.npy"), novelty::DType::f32, 1, 3, v.data());
    const std::vector<float> w = {1, 0};
    novelty::write_npy(tmp.file("w.npy"), novelty::DType::f32, 1, 2, w.data());
    novelty::test::write_file(tmp.file("arch.jsonl"), line("o", ""));
    r = run_cli("dedup -q --device cpu --ideas " + shell_quote(tmp.file("ok.npy")) + " --against " +
                shell_quote(tmp.file("arch.jsonl")) + " --against-vectors " + shell_quote(tmp.file("w.npy")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("dimension 2 but the ideas file has 3"), std::string::npos) << r.err;
}

}  // namespace
