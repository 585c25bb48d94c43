// bench/devset/rnd_corrections.py: its plain RND is the engine's (`novelty score`) on a set with
// corpus-paper ideas at cutoffs and without, and a text idea given by vector; --check refuses a
// score file that differs.
#include "json_lines.hpp"
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

constexpr int n_papers = 200, dim = 8;

std::string python_with_numpy() {
    const std::string venv = std::string(NOVELTY_SOURCE_DIR) + "/.venv/bin/python";
    for (const std::string& python : {venv, std::string("python3")})
        if (std::system((shell_quote(python) + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return python;
    return "";
}

int run_script(const std::string& python, const TempDir& tmp, const std::string& flags) {
    const std::string cmd = shell_quote(python) + " " +
                            shell_quote(std::string(NOVELTY_SOURCE_DIR) + "/bench/devset/rnd_corrections.py") + " --work " +
                            shell_quote(tmp.file("w")) + " " + flags + " >" + shell_quote(tmp.file("out.txt")) + " 2>" +
                            shell_quote(tmp.file("err.txt"));
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(RndCorrectionsScript, ItsRndIsTheEngines) {
    const std::string python = python_with_numpy();
    if (python.empty()) GTEST_SKIP() << "no Python with numpy (scripts/setup.sh installs one in .venv)";
    TempDir tmp;
    std::filesystem::create_directories(tmp.file("w/set"));
    // Papers p0..p199 over the years 2000..2019, the first half field ml, the rest biomed.
    std::string papers, ids;
    for (int i = 0; i < n_papers; ++i) {
        papers += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper\", \"year\": " + std::to_string(2000 + i % 20) +
                  ", \"field\": \"" + (i < n_papers / 2 ? "ml" : "biomed") + "\"}\n";
        ids += "p" + std::to_string(i) + "\n";
    }
    novelty::test::write_file(tmp.file("papers.jsonl"), papers);
    novelty::test::write_file(tmp.file("ids.txt"), ids);
    const std::string corpus = tmp.file("w/corpus");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(corpus)).exit_code, 0);
    const auto v = novelty::test::random_unit_rows(n_papers, dim, 31);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, n_papers, dim, v.data());
    const auto attached = run_cli("corpus add-vectors -q " + shell_quote(corpus) + " --vectors " + shell_quote(tmp.file("v.npy")) +
                                  " --ids " + shell_quote(tmp.file("ids.txt")));
    ASSERT_EQ(attached.exit_code, 0) << attached.err;

    // Ideas: corpus papers with a year cutoff, a day cutoff and none, and two text ideas by vector;
    // each field holds both labels.
    const auto text_vectors = novelty::test::random_unit_rows(2, dim, 32);
    std::string ideas, labels;
    std::vector<float> idea_vectors;
    const std::vector<std::pair<std::string, std::string>> by_id{
        {"p5", "2016"}, {"p30", "2018-06-30"}, {"p77", ""}, {"p120", "2017"}, {"p150", ""}, {"p199", "2019-12-31"}};
    int k = 0;
    for (const auto& [id, date] : by_id) {
        ideas += "{\"id\": \"" + id + "\"" + (date.empty() ? "" : ", \"date\": \"" + date + "\"") + "}\n";
        const int row = std::stoi(id.substr(1));
        idea_vectors.insert(idea_vectors.end(), v.begin() + row * dim, v.begin() + (row + 1) * dim);
        labels += "{\"id\": \"" + id + "\", \"label\": " + std::to_string(k++ % 2) + ", \"field\": \"" +
                  (row < n_papers / 2 ? "ml" : "biomed") + "\"}\n";
    }
    for (int t = 0; t < 2; ++t) {
        const std::string id = "text" + std::to_string(t);
        ideas += "{\"id\": \"" + id + "\", \"date\": \"2015\", \"title\": \"An idea\", \"text\": \"words\"}\n";
        idea_vectors.insert(idea_vectors.end(), text_vectors.begin() + t * dim, text_vectors.begin() + (t + 1) * dim);
        labels += "{\"id\": \"" + id + "\", \"label\": 1, \"field\": \"" + (t ? "biomed" : "ml") + "\"}\n";
    }
    novelty::test::write_file(tmp.file("w/set/ideas.jsonl"), ideas);
    novelty::test::write_file(tmp.file("w/set/labels.jsonl"), labels);
    novelty::write_npy(tmp.file("ideas.npy"), novelty::DType::f32, idea_vectors.size() / dim, dim, idea_vectors.data());
    novelty::write_npy(tmp.file("text.npy"), novelty::DType::f32, 2, dim, text_vectors.data());

    const auto scored = run_cli("score -q --corpus " + shell_quote(corpus) + " --ideas " + shell_quote(tmp.file("w/set/ideas.jsonl")) +
                                " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 10 --q 5 --out " +
                                shell_quote(tmp.file("scores.jsonl")));
    ASSERT_EQ(scored.exit_code, 0) << scored.err;
    const std::string flags = "--p 10 --q 5 --depth 40 --text-vectors " + shell_quote(tmp.file("text.npy")) + " --check ";
    ASSERT_EQ(run_script(python, tmp, flags + shell_quote(tmp.file("scores.jsonl"))), 0)
        << novelty::test::read_file(tmp.file("err.txt"));
    EXPECT_NE(novelty::test::read_file(tmp.file("out.txt")).find("RND equals the engine's on all 8 ideas"), std::string::npos)
        << novelty::test::read_file(tmp.file("out.txt"));

    // A score file with one RND changed is refused.
    std::string changed;
    for (const auto& r : novelty::test::json_lines(tmp.file("scores.jsonl"))) {
        nlohmann::json j = r;
        if (j["id"] == "p30") j["scores"]["rnd"] = j["scores"]["rnd"].get<double>() + 10;
        changed += j.dump() + "\n";
    }
    novelty::test::write_file(tmp.file("changed.jsonl"), changed);
    EXPECT_NE(run_script(python, tmp, flags + shell_quote(tmp.file("changed.jsonl"))), 0);
    EXPECT_NE(novelty::test::read_file(tmp.file("err.txt")).find("RND differs from the engine's"), std::string::npos);
}
