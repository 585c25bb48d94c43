// The Semantic Scholar corpus from the command line: SPECTER2 vectors make text queries refused
// with a message that says how to give vectors; vectors given work; ideas and exclusions name
// papers by DOI, arXiv id or PMID; corpus info names the papers left out.
#include "novelty/io/npy.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

using novelty::test::fixture;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

std::string s2_corpus(const TempDir& tmp) {
    const std::string dir = tmp.file("c");
    std::string inputs;
    for (const char* f : {"papers-part0.jsonl", "papers-part1.jsonl.gz", "abstracts-part0.jsonl",
                          "embeddings-specter_v2-part0.jsonl"})
        inputs += " " + shell_quote(fixture(std::string("import/s2/") + f));
    const auto r = run_cli("corpus import -q --format s2 --in" + inputs + " --out " + shell_quote(dir));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("left out 1 paper given without a vector"), std::string::npos) << r.out;
    return dir;
}

}  // namespace

TEST(CorporaCli, TextQueriesOnASpecter2CorpusAreRefusedWithHowToGiveVectors) {
    TempDir tmp;
    const std::string dir = s2_corpus(tmp);
    novelty::test::write_file(tmp.file("q.jsonl"), "{\"id\": \"idea-1\", \"title\": \"Contrastive encoders\"}\n");
    const auto r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                           " --k 3 --out " + shell_quote(tmp.file("out.jsonl")));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("was embedded with 'specter_v2'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--vectors FILE.npy"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--embed-model specter_v2"), std::string::npos) << r.err;
}

TEST(CorporaCli, GivenVectorsSearchAndExclusionsNameBothByDoiAndArxivId) {
    TempDir tmp;
    const std::string dir = s2_corpus(tmp);
    novelty::test::write_file(tmp.file("q.jsonl"),
                              "{\"id\": \"idea-1\", \"title\": \"t\", \"exclude\": [\"doi:10.1000/ABC.1\"]}\n"
                              "{\"id\": \"idea-2\", \"title\": \"t\", \"exclude\": [\"arXiv:2203.00004\"]}\n");
    const float q[] = {1, 0, 0, 0, 1, 0, 0, 0};
    novelty::write_npy(tmp.file("q.npy"), novelty::DType::f32, 2, 4, q);
    const auto r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                           " --vectors " + shell_quote(tmp.file("q.npy")) + " --k 5 --out " + shell_quote(tmp.file("o.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(tmp.file("o.jsonl"));
    ASSERT_EQ(lines.size(), 2u);
    auto ids = [](const nlohmann::json& line) {
        std::vector<std::string> out;
        for (const auto& n : line["neighbors"]) out.push_back(n["id"]);
        return out;
    };
    // 5 rows (1006 has no vector and is not a row); one excluded in each.
    EXPECT_EQ(ids(lines[0]).size(), 4u);
    for (const auto& id : ids(lines[0])) EXPECT_NE(id, "1001");
    EXPECT_EQ(ids(lines[1]).front(), "1001");  // the query is 1001's vector
    for (const auto& id : ids(lines[1])) EXPECT_NE(id, "1004");
    const auto info = run_cli("corpus info " + shell_quote(dir));
    EXPECT_NE(info.out.find("unembedded  1 paper given without a vector"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find(": 1006"), std::string::npos) << info.out;
}
