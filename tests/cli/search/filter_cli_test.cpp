// Metadata filters end to end: --field, --min-citations, --papers and a record's own "filter" on
// search, score and retrieve; every neighbour passes the filter.
#include "json_lines.hpp"
#include "novelty/corpus/corpus.hpp"
#include "scoring_corpus.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <set>
#include <nlohmann/json.hpp>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

// 60 papers "p0".."p59" with random 8-d vectors, field "a" for even i and "b" for odd, i % 7
// citations; 4 ideas with vectors.
struct FilterCorpus {
    TempDir tmp;
    std::string dir;
    FilterCorpus() {
        std::vector<std::string> fields;
        for (int i = 0; i < 60; ++i) fields.push_back(i % 2 ? "b" : "a");
        dir = novelty::test::make_scoring_corpus(tmp, novelty::test::random_unit_rows(60, 8, 31), 8, fields);
        const auto ideas = novelty::test::random_unit_rows(4, 8, 32);
        novelty::write_npy(tmp.file("ideas.npy"), novelty::DType::f32, 4, 8, ideas.data());
        novelty::test::write_file(tmp.file("ideas.jsonl"),
                                  "{\"id\": \"i0\", \"title\": \"x\"}\n{\"id\": \"i1\", \"title\": \"x\", \"filter\": "
                                  "{\"min_citations\": 4}}\n{\"id\": \"i2\", \"title\": \"x\"}\n{\"id\": \"i3\", "
                                  "\"title\": \"x\", \"filter\": {\"papers\": [\"p1\", \"p3\", \"p5\", \"p7\", \"p9\", "
                                  "\"p2\"]}}\n");
    }
    std::string base(const std::string& command) const {
        return command + " -q --corpus " + shell_quote(dir);
    }
};

int index_of(const std::string& id) { return std::stoi(id.substr(1)); }

TEST(FilterCli, SearchKeepsOnlyPapersPassingTheRunAndRecordFilters) {
    FilterCorpus f;
    const auto r = run_cli(f.base("search") + " --queries " + shell_quote(f.tmp.file("ideas.jsonl")) + " --vectors " +
                           shell_quote(f.tmp.file("ideas.npy")) + " --k 10 --field b --out " + shell_quote(f.tmp.file("s.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(f.tmp.file("s.jsonl"));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0]["neighbors"].size(), 10u);
    for (std::size_t q = 0; q < 4; ++q)
        for (const auto& n : lines[q]["neighbors"]) {
            const int i = index_of(n["id"]);
            EXPECT_EQ(i % 2, 1) << "field b only: " << n["id"];
            if (q == 1) EXPECT_GE(i % 7, 4) << "i1 also needs 4 citations: " << n["id"];
        }
    // i3: its own list, within field b: p1 p3 p5 p7 p9 (p2 is field a).
    EXPECT_EQ(lines[3]["neighbors"].size(), 5u);
    // The unfiltered search finds field-a papers too, so the filter did something.
    ASSERT_EQ(run_cli(f.base("search") + " --queries " + shell_quote(f.tmp.file("ideas.npy")) + " --k 10 --out " +
                      shell_quote(f.tmp.file("all.jsonl")))
                  .exit_code,
              0);
    const auto unfiltered = novelty::test::json_lines(f.tmp.file("all.jsonl"));
    bool any_even = false;
    for (const auto& n : unfiltered[0]["neighbors"]) any_even = any_even || index_of(n["id"]) % 2 == 0;
    EXPECT_TRUE(any_even);
}

TEST(FilterCli, ScoreAndRetrieveTakeTheFiltersToo) {
    FilterCorpus f;
    novelty::test::write_file(f.tmp.file("list.txt"), "p4\np8\n p10 \np12\np14\np16\np18\np20\n\np22\n");
    auto r = run_cli(f.base("score") + " --ideas " + shell_quote(f.tmp.file("ideas.npy")) + " --p 3 --q 2 --papers " +
                     shell_quote(f.tmp.file("list.txt")) + " --out " + shell_quote(f.tmp.file("score.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::set<std::string> listed{"p4", "p8", "p10", "p12", "p14", "p16", "p18", "p20", "p22"};
    const auto scored = novelty::test::json_lines(f.tmp.file("score.jsonl"));
    for (const auto& line : scored)
        for (const auto& n : line["neighbors"]) EXPECT_TRUE(listed.count(n["id"].get<std::string>())) << n["id"];
    r = run_cli("retrieve -q --corpus " + shell_quote(f.dir) + " --queries " + shell_quote(f.tmp.file("ideas.jsonl")) +
                " --vectors " + shell_quote(f.tmp.file("ideas.npy")) + " --methods dense --k 5 --min-citations 6 --jsonl " +
                shell_quote(f.tmp.file("r.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto retrieved = novelty::test::json_lines(f.tmp.file("r.jsonl"));
    ASSERT_EQ(retrieved.size(), 4u);
    for (const auto& line : retrieved)
        for (const auto& hit : line["results"]["dense"]) EXPECT_GE(index_of(hit["id"]) % 7, 6) << hit;
    // A filter leaving too few papers for p and q is refused, naming the problem.
    r = run_cli(f.base("score") + " --ideas " + shell_quote(f.tmp.file("ideas.npy")) + " --p 20 --q 2 --papers " +
                shell_quote(f.tmp.file("list.txt")));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("filter"), std::string::npos) << r.err;
    // An empty --papers file is an input error naming the file.
    novelty::test::write_file(f.tmp.file("empty.txt"), "\n");
    r = run_cli(f.base("search") + " --queries " + shell_quote(f.tmp.file("ideas.npy")) + " --papers " +
                shell_quote(f.tmp.file("empty.txt")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("empty.txt"), std::string::npos) << r.err;
}

}  // namespace
