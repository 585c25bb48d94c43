// bench/devset/build_devset.py's --exclude-labels: a second set draws none of the first set's
// negatives or biomedical positives, and keeps the ML positives (the orals of the year); a third set
// draws --ml-positives of the orals with the seed and excludes the labels of several sets.
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <sys/wait.h>

using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

bool have_python() { return std::system("python3 -c 'import json' >/dev/null 2>&1") == 0; }

int run_builder(const TempDir& tmp, const std::string& flags) {
    const std::string cmd = "python3 " + shell_quote(std::string(NOVELTY_SOURCE_DIR) + "/bench/devset/build_devset.py") +
                            " --ml " + shell_quote(tmp.file("ml.jsonl")) + " --biomed " + shell_quote(tmp.file("bio.jsonl")) +
                            " --ml-negatives 2 --biomed-positives 2 --biomed-negatives 2 --ml-corpus-size 0 "
                            "--biomed-corpus-size 0 " + flags + " 2>" + shell_quote(tmp.file("err.txt"));
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Label records of a built set by id.
std::map<std::string, nlohmann::json> labels_of(const std::string& path) {
    std::map<std::string, nlohmann::json> out;
    std::istringstream lines(novelty::test::read_file(path));
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) {
            const auto j = nlohmann::json::parse(line);
            out[j["id"].get<std::string>()] = j;
        }
    return out;
}

/// 3 orals of 2025, 6 ML candidates for negatives (cited 100..600), 6 recent and 6 old works.
void write_inputs(const TempDir& tmp) {
    std::string ml, bio;
    for (int i = 0; i < 3; ++i)
        ml += "{\"id\": \"aistats2025:o" + std::to_string(i) + "\", \"venue\": \"aistats\", \"year\": 2025, \"status\": "
              "\"Oral\", \"title\": \"Oral " + std::to_string(i) + "\", \"abstract\": \"a\"}\n";
    for (int i = 0; i < 6; ++i)
        ml += "{\"id\": \"cvpr2014:n" + std::to_string(i) + "\", \"venue\": \"cvpr\", \"year\": 2014, \"status\": "
              "\"Poster\", \"title\": \"Old " + std::to_string(i) + "\", \"abstract\": \"b\", \"gs_citation\": " +
              std::to_string(600 - 100 * i) + "}\n";
    for (int i = 0; i < 6; ++i) {
        bio += "{\"openalex\": \"https://openalex.org/W1" + std::to_string(i) + "\", \"year\": 2021, \"date\": "
               "\"2021-03-0" + std::to_string(i + 1) + "\", \"title\": \"Recent\", \"abstract\": \"c\"}\n";
        bio += "{\"openalex\": \"https://openalex.org/W2" + std::to_string(i) + "\", \"year\": 2005, \"title\": \"Old\", "
               "\"abstract\": \"d\", \"cited_by_count\": " + std::to_string(60 - 10 * i) + "}\n";
    }
    novelty::test::write_file(tmp.file("ml.jsonl"), ml);
    novelty::test::write_file(tmp.file("bio.jsonl"), bio);
}

}  // namespace

TEST(DevsetBuilder, ExcludeLabelsDrawsFreshNegativesAndBiomedicalPositives) {
    if (!have_python()) GTEST_SKIP() << "python3 not found";
    TempDir tmp;
    write_inputs(tmp);
    ASSERT_EQ(run_builder(tmp, "--out " + shell_quote(tmp.file("a"))), 0) << novelty::test::read_file(tmp.file("err.txt"));
    ASSERT_EQ(run_builder(tmp, "--seed 5 --out " + shell_quote(tmp.file("b")) + " --exclude-labels " +
                                   shell_quote(tmp.file("a/labels.jsonl"))),
              0)
        << novelty::test::read_file(tmp.file("err.txt"));
    const auto a = labels_of(tmp.file("a/labels.jsonl")), b = labels_of(tmp.file("b/labels.jsonl"));
    ASSERT_EQ(a.size(), 3u + 2 + 2 + 2);
    ASSERT_EQ(b.size(), a.size());
    // The two most cited first, the next two when those are excluded.
    EXPECT_TRUE(a.count("cvpr2014:n0") && a.count("cvpr2014:n1"));
    EXPECT_TRUE(b.count("cvpr2014:n2") && b.count("cvpr2014:n3"));
    EXPECT_TRUE(a.count("W20") && a.count("W21"));
    EXPECT_TRUE(b.count("W22") && b.count("W23"));
    for (const auto& [id, label] : b) {
        const bool ml_positive = label["field"] == "ml" && label["label"] == 1;
        EXPECT_EQ(a.count(id) > 0, ml_positive) << id;  // only the orals are shared
    }
    const auto summary = nlohmann::json::parse(novelty::test::read_file(tmp.file("b/devset.json")));
    EXPECT_EQ(summary["excluded_ids"], a.size());

    novelty::test::write_file(tmp.file("bad.jsonl"), "{\"id\": \"x\"}\n{\"label\": 1}\n");
    EXPECT_EQ(run_builder(tmp, "--out " + shell_quote(tmp.file("c")) + " --exclude-labels " + shell_quote(tmp.file("bad.jsonl"))), 2);
    EXPECT_NE(novelty::test::read_file(tmp.file("err.txt")).find("bad.jsonl:2"), std::string::npos);
}

TEST(DevsetBuilder, MlPositivesDrawsSeededOralsAndExcludeLabelsTakesSeveralFiles) {
    if (!have_python()) GTEST_SKIP() << "python3 not found";
    TempDir tmp;
    write_inputs(tmp);
    ASSERT_EQ(run_builder(tmp, "--out " + shell_quote(tmp.file("a"))), 0) << novelty::test::read_file(tmp.file("err.txt"));
    ASSERT_EQ(run_builder(tmp, "--seed 5 --out " + shell_quote(tmp.file("b")) + " --exclude-labels " +
                                   shell_quote(tmp.file("a/labels.jsonl"))),
              0);
    const std::string third = "--seed 9 --ml-positives 2 --exclude-labels " + shell_quote(tmp.file("a/labels.jsonl")) + " " +
                              shell_quote(tmp.file("b/labels.jsonl")) + " --out ";
    ASSERT_EQ(run_builder(tmp, third + shell_quote(tmp.file("c"))), 0) << novelty::test::read_file(tmp.file("err.txt"));
    ASSERT_EQ(run_builder(tmp, third + shell_quote(tmp.file("d"))), 0);
    // Deterministic: the same flags give the same files.
    EXPECT_EQ(novelty::test::read_file(tmp.file("c/labels.jsonl")), novelty::test::read_file(tmp.file("d/labels.jsonl")));
    EXPECT_EQ(novelty::test::read_file(tmp.file("c/ml_corpus.jsonl")), novelty::test::read_file(tmp.file("d/ml_corpus.jsonl")));
    const auto a = labels_of(tmp.file("a/labels.jsonl")), b = labels_of(tmp.file("b/labels.jsonl")),
               c = labels_of(tmp.file("c/labels.jsonl"));
    int orals = 0;
    for (const auto& [id, label] : c) {
        if (label["field"] == "ml" && label["label"] == 1) {
            ++orals;
            continue;
        }
        EXPECT_EQ(a.count(id) + b.count(id), 0u) << id << " is a label of an excluded set";
    }
    EXPECT_EQ(orals, 2);
    // The two excluded sets took the four most cited of each kind: the fifth and sixth come next.
    EXPECT_TRUE(c.count("cvpr2014:n4") && c.count("cvpr2014:n5"));
    EXPECT_TRUE(c.count("W24") && c.count("W25"));
    // The oral not drawn stays in the corpus pool; the drawn ones do not.
    const std::string corpus = novelty::test::read_file(tmp.file("c/ml_corpus.jsonl"));
    for (int i = 0; i < 3; ++i) {
        const std::string id = "aistats2025:o" + std::to_string(i);
        EXPECT_EQ(corpus.find("\"" + id + "\"") != std::string::npos, c.count(id) == 0) << id;
    }
    const auto summary = nlohmann::json::parse(novelty::test::read_file(tmp.file("c/devset.json")));
    EXPECT_EQ(summary["excluded_ids"], 3u + 6 + 6);  // the orals are shared by both sets
    EXPECT_EQ(summary["flags"]["ml_positives"], 2);

    EXPECT_EQ(run_builder(tmp, "--ml-positives -1 --out " + shell_quote(tmp.file("e"))), 2);
    EXPECT_NE(novelty::test::read_file(tmp.file("err.txt")).find("--ml-positives"), std::string::npos);
}
