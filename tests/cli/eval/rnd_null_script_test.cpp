// bench/devset/rnd_null.py: draws the asked number of papers per field (none of the excluded
// labels), scores them with `novelty score`, and reports each field's quartiles and mean and the
// KS statistic between the fields as computed from the engine's scores; refuses a field too small
// for --per-field and a malformed --pq.
#include "novelty/io/npy.hpp"
#include "scoring/score_sweep.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <sys/wait.h>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

constexpr int papers_per_field = 60, dim = 8, drawn_per_field = 24;

bool have_python() { return std::system("python3 -c 'import json' >/dev/null 2>&1") == 0; }

/// A corpus of two fields, "a" (p0..p59) and "b" (p60..p119), with random unit vectors.
std::string make_corpus(const TempDir& tmp) {
    std::string a, b;
    for (int i = 0; i < 2 * papers_per_field; ++i)
        (i < papers_per_field ? a : b) += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper " +
                                          std::to_string(i) + "\", \"year\": 2010}\n";
    novelty::test::write_file(tmp.file("a.jsonl"), a);
    novelty::test::write_file(tmp.file("b.jsonl"), b);
    const std::string corpus = tmp.file("c");
    const auto imported = run_cli("corpus import -q --in " + shell_quote(tmp.file("a.jsonl")) + " " +
                                  shell_quote(tmp.file("b.jsonl")) + " --field a b --out " + shell_quote(corpus));
    EXPECT_EQ(imported.exit_code, 0) << imported.err;
    const auto v = novelty::test::random_unit_rows(2 * papers_per_field, dim, 5);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 2 * papers_per_field, dim, v.data());
    std::string ids;
    for (int i = 0; i < 2 * papers_per_field; ++i) ids += "p" + std::to_string(i) + "\n";
    novelty::test::write_file(tmp.file("ids.txt"), ids);
    const auto attached = run_cli("corpus add-vectors -q " + shell_quote(corpus) + " --vectors " + shell_quote(tmp.file("v.npy")) +
                                  " --ids " + shell_quote(tmp.file("ids.txt")));
    EXPECT_EQ(attached.exit_code, 0) << attached.err;
    return corpus;
}

int run_script(const TempDir& tmp, const std::string& corpus, const std::string& flags) {
    const std::string cmd = "python3 " + shell_quote(std::string(NOVELTY_SOURCE_DIR) + "/bench/devset/rnd_null.py") +
                            " --corpus " + shell_quote(corpus) + " --novelty " + shell_quote(NOVELTY_CLI_PATH) + " " + flags +
                            " >" + shell_quote(tmp.file("out.txt")) + " 2>" + shell_quote(tmp.file("err.txt"));
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<nlohmann::json> json_lines(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::istringstream lines(novelty::test::read_file(path));
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
}

}  // namespace

TEST(RndNullScript, SummarisesTheEnginesScoresPerField) {
    if (!have_python()) GTEST_SKIP() << "python3 not found";
    TempDir tmp;
    const std::string corpus = make_corpus(tmp);
    // p0..p35 excluded: exactly the 24 papers p36..p59 of field a may be drawn.
    std::string excluded = "{\"id\": \"p60\", \"label\": 0}\n";
    for (int i = 0; i < 36; ++i) excluded += "{\"id\": \"p" + std::to_string(i) + "\", \"label\": 1}\n";
    novelty::test::write_file(tmp.file("labels.jsonl"), excluded);
    ASSERT_EQ(run_script(tmp, corpus, "--per-field 24 --pq 10:5 --methods rnd,hd --exclude-labels " +
                                          shell_quote(tmp.file("labels.jsonl")) + " --work " + shell_quote(tmp.file("w")) +
                                          " --json " + shell_quote(tmp.file("summary.json"))),
              0) << novelty::test::read_file(tmp.file("err.txt"));

    // The draw: 24 distinct papers of each field, no excluded label among them.
    std::set<std::string> drawn;
    std::map<std::string, std::string> field_of;
    for (const auto& idea : json_lines(tmp.file("w/null_ideas.jsonl"))) {
        const std::string id = idea["id"];
        drawn.insert(id);
        field_of[id] = std::stoi(id.substr(1)) < papers_per_field ? "a" : "b";
    }
    ASSERT_EQ(drawn.size(), 2u * drawn_per_field);
    EXPECT_EQ(std::count_if(field_of.begin(), field_of.end(), [](const auto& kv) { return kv.second == "a"; }), drawn_per_field);
    for (int i = 36; i < papers_per_field; ++i) EXPECT_TRUE(drawn.count("p" + std::to_string(i))) << i;
    EXPECT_FALSE(drawn.count("p60"));

    // The summary agrees with the engine's score file: quartiles at ranks floor(q * 23), the mean,
    // and the KS statistic as `eval sweep` computes it.
    std::map<std::string, std::map<std::string, std::vector<double>>> values;  // method -> field -> scores
    for (const auto& r : json_lines(tmp.file("w/null_p10_q5.jsonl")))
        for (const std::string method : {"rnd", "hd"}) values[method][field_of[r["id"]]].push_back(r["scores"][method]);
    const auto summary = nlohmann::json::parse(novelty::test::read_file(tmp.file("summary.json")));
    ASSERT_EQ(summary["rows"].size(), 2u);
    for (const auto& row : summary["rows"]) {
        EXPECT_EQ(row["p"], 10);
        EXPECT_EQ(row["q"], 5);
        auto& by_field = values[row["method"]];
        for (auto& [field, v] : by_field) {
            std::sort(v.begin(), v.end());
            const auto& s = row["fields"][field];
            EXPECT_EQ(s["n"], drawn_per_field);
            EXPECT_DOUBLE_EQ(s["q25"].get<double>(), v[5]);
            EXPECT_DOUBLE_EQ(s["median"].get<double>(), v[11]);
            EXPECT_DOUBLE_EQ(s["q75"].get<double>(), v[17]);
            double sum = 0;
            for (double x : v) sum += x;
            EXPECT_NEAR(s["mean"].get<double>(), sum / v.size(), 1e-9);
        }
        EXPECT_NEAR(row["ks_between_fields"].get<double>(), novelty::ks_statistic(by_field["a"], by_field["b"]), 1e-12)
            << row["method"];
    }
}

TEST(RndNullScript, RefusesASmallFieldAndAMalformedPq) {
    if (!have_python()) GTEST_SKIP() << "python3 not found";
    TempDir tmp;
    const std::string corpus = make_corpus(tmp);
    EXPECT_NE(run_script(tmp, corpus, "--per-field 61 --pq 10:5"), 0);
    EXPECT_NE(novelty::test::read_file(tmp.file("err.txt")).find("fewer than --per-field 61"), std::string::npos)
        << novelty::test::read_file(tmp.file("err.txt"));
    // A corpus without vectors: the engine's refusal is passed on, with the script's own line.
    const std::string bare = tmp.file("bare");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("a.jsonl")) + " --field a --out " + shell_quote(bare)).exit_code, 0);
    EXPECT_NE(run_script(tmp, bare, "--per-field 5 --pq 10:5"), 0);
    const std::string err = novelty::test::read_file(tmp.file("err.txt"));
    EXPECT_NE(err.find("no vectors"), std::string::npos) << err;
    EXPECT_NE(err.find("novelty score failed"), std::string::npos) << err;
    EXPECT_EQ(err.find("Traceback"), std::string::npos) << err;
    EXPECT_NE(run_script(tmp, corpus, "--pq 10"), 0);
    EXPECT_NE(novelty::test::read_file(tmp.file("err.txt")).find("--pq takes P:Q pairs"), std::string::npos);
}
