// novelty score end to end: output keys, CSV, resume, errors.
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

// 60 papers (years 2000..2019) with random 8-d vectors, and 5 ideas given as vectors.
std::string make_corpus(const TempDir& tmp) {
    std::string records;
    for (int i = 0; i < 60; ++i)
        records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper " + std::to_string(i) +
                   "\", \"year\": " + std::to_string(2000 + i % 20) + ", \"citations\": " + std::to_string(i) + "}\n";
    novelty::test::write_file(tmp.file("papers.jsonl"), records);
    EXPECT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(tmp.file("c")))
                  .exit_code,
              0);
    const auto v = novelty::test::random_unit_rows(60, 8, 3);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 60, 8, v.data());
    EXPECT_EQ(run_cli("corpus add-vectors -q " + shell_quote(tmp.file("c")) + " --vectors " + shell_quote(tmp.file("v.npy")))
                  .exit_code,
              0);
    novelty::test::write_file(tmp.file("ideas.jsonl"),
                              "{\"id\": \"i1\"}\n{\"id\": \"i2\", \"date\": \"2015\"}\n{\"id\": \"i3\", \"exclude\": [\"p1\"]}\n"
                              "{\"id\": \"i4\"}\n{\"id\": \"i5\"}\n");
    const auto ideas = novelty::test::random_unit_rows(5, 8, 4);
    novelty::write_npy(tmp.file("ideas.npy"), novelty::DType::f32, 5, 8, ideas.data());
    return tmp.file("c");
}

}  // namespace

TEST(ScoreCli, WritesTheScoreKeysWithProvenance) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const std::string base = "score -q --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                             " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 10 --q 5 --split 2010";
    const auto r = run_cli(base + " --out " + shell_quote(tmp.file("s.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(tmp.file("s.jsonl"));
    ASSERT_EQ(lines.size(), 5u);
    for (const auto& j : lines) {
        ASSERT_TRUE(j["scores"].contains("rnd"));
        const double rnd = j["scores"]["rnd"];
        EXPECT_GE(rnd, 0.0);
        EXPECT_LE(rnd, 100.0);
        EXPECT_DOUBLE_EQ(j["scores"]["density"].get<double>(), j["nd"].get<double>());
        EXPECT_TRUE(j["scores"]["hd"].is_number());
        EXPECT_TRUE(j["scores"]["on"].is_number());  // split and citations given
        EXPECT_EQ(j["neighbors"].size(), 10u);
        EXPECT_TRUE(j["neighbors"][0].contains("title"));
        EXPECT_EQ(j["provenance"]["corpus"].get<std::string>().size(), 64u);
        EXPECT_EQ(j["provenance"]["p"], 10);
        EXPECT_EQ(j["provenance"]["q"], 5);
        // The backend of this run, and of the self-join the neighbours' densities came from.
        EXPECT_EQ(j["provenance"]["backend"], "cpu");
        EXPECT_EQ(j["provenance"]["densities_backend"], "cpu");
        EXPECT_FALSE(j["provenance"].contains("embedder_precision"));  // given vectors: no precision known
    }
    EXPECT_EQ(lines[1]["provenance"]["cutoff"], "2015");
    EXPECT_EQ(lines[2]["provenance"]["excluded"], nlohmann::json::array({"p1"}));
    for (const auto& n : lines[2]["neighbors"]) EXPECT_NE(n["id"], "p1");
    EXPECT_FALSE(std::filesystem::exists(tmp.file("s.jsonl.partial")));

    // CSV, and a table without --out.
    ASSERT_EQ(run_cli(base + " --format csv --out " + shell_quote(tmp.file("s.csv"))).exit_code, 0);
    const std::string csv = novelty::test::read_file(tmp.file("s.csv"));
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "id,rnd,hd,on,density,nd,nearest_id,nearest_sim,cutoff");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6);
    const auto table = run_cli(base);
    EXPECT_NE(table.out.find("i3"), std::string::npos) << table.out;
}

TEST(ScoreCli, ResumeSkipsFinishedIdeas) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const std::string base = "score -q --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                             " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 10 --q 5 --out " +
                             shell_quote(tmp.file("s.jsonl"));
    ASSERT_EQ(run_cli(base).exit_code, 0);
    auto lines = novelty::test::json_lines(tmp.file("s.jsonl"));
    // An interrupted run: two finished ideas (one marked so a recomputation would show) and a cut line.
    lines[0]["scores"]["rnd"] = 123.0;
    novelty::test::write_file(tmp.file("s.jsonl.partial"), lines[0].dump() + "\n" + lines[1].dump() + "\n{\"id\": \"i3\", \"sco");
    std::filesystem::remove(tmp.file("s.jsonl"));
    auto r = run_cli(base);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
    r = run_cli(base + " --resume");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto resumed = novelty::test::json_lines(tmp.file("s.jsonl"));
    ASSERT_EQ(resumed.size(), 5u);
    EXPECT_EQ(resumed[0]["scores"]["rnd"], 123.0);  // kept, not recomputed
    std::vector<std::string> ids;
    for (const auto& j : resumed) ids.push_back(j["id"]);
    EXPECT_EQ(ids, (std::vector<std::string>{"i1", "i2", "i3", "i4", "i5"}));
    // Scored in another batch: equal up to float rounding.
    for (const char* key : {"rnd", "hd", "density"})
        EXPECT_NEAR(resumed[2]["scores"][key].get<double>(), lines[2]["scores"][key].get<double>(), 1e-6) << key;
}

TEST(ScoreCli, CsvResumesThroughTheSameResumableOutput) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const std::string base = "score -q --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                             " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 10 --q 5 --format csv --out " +
                             shell_quote(tmp.file("s.csv"));
    ASSERT_EQ(run_cli(base).exit_code, 0);
    const std::string full = novelty::test::read_file(tmp.file("s.csv"));
    // Interrupted after the header, the first idea (marked) and a cut line.
    const std::size_t header_end = full.find('\n') + 1;
    const std::size_t first_end = full.find('\n', header_end) + 1;
    std::string first = full.substr(header_end, first_end - header_end);
    ASSERT_EQ(first.substr(0, 3), "i1,");
    first.replace(3, first.find(',', 3) - 3, "77.0000");
    novelty::test::write_file(tmp.file("s.csv.partial"), full.substr(0, header_end) + first + "i2,1");
    std::filesystem::remove(tmp.file("s.csv"));
    const auto r = run_cli(base + " --resume");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string resumed = novelty::test::read_file(tmp.file("s.csv"));
    EXPECT_EQ(resumed.substr(0, header_end + first.size()), full.substr(0, header_end) + first);  // kept, not redone
    EXPECT_EQ(resumed.substr(header_end + first.size()), full.substr(first_end));  // the rest as a full run writes it
}

TEST(ScoreCli, PAndQLargerThanTheCutoffNameTheIdea) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const auto r = run_cli("score -q --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                           " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 50 --q 5");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("ideas.jsonl:2: idea 'i2': p = 50 and q = 5 need more than 50 papers, but the corpus up to 2015"), std::string::npos) << r.err;
}

TEST(ScoreCli, AReadOnlyCorpusIsScoredWithAWarning) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    novelty::test::write_file(dir + "/cache", "not a directory");  // nothing can be cached
    const auto r = run_cli("score --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                           " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 10 --q 5 --out " +
                           shell_quote(tmp.file("s.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: the neighbour densities could not be cached"), std::string::npos) << r.err;
    EXPECT_EQ(novelty::test::json_lines(tmp.file("s.jsonl")).size(), 5u);
}

// --storage bf16 and int8 give --storage f32's scores and neighbours to the last printed digit,
// with the storage recorded in provenance; a storage the CPU index does not have is refused.
TEST(ScoreCli, NarrowStoragesScoreExactlyAsFloat32) {
    std::vector<nlohmann::json> runs;
    for (const std::string storage : {"f32", "bf16", "int8"}) {
        TempDir tmp;  // a corpus each: the second run must compute its own densities
        const std::string dir = make_corpus(tmp);
        const auto r = run_cli("score -q --device cpu --storage " + storage + " --corpus " + shell_quote(dir) +
                               " --ideas " + shell_quote(tmp.file("ideas.jsonl")) + " --vectors " +
                               shell_quote(tmp.file("ideas.npy")) + " --p 10 --q 5 --out " + shell_quote(tmp.file("s.jsonl")));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto lines = novelty::test::json_lines(tmp.file("s.jsonl"));
        ASSERT_EQ(lines.size(), 5u);
        const std::string label = storage == "f32" ? "cpu" : "cpu-" + storage;
        for (const auto& j : lines) {
            EXPECT_EQ(j["provenance"]["backend"], label);
            EXPECT_EQ(j["provenance"]["densities_backend"], label);
        }
        runs.emplace_back(lines);
    }
    for (std::size_t run = 1; run < runs.size(); ++run)
        for (std::size_t i = 0; i < 5; ++i) {
            EXPECT_EQ(runs[run][i]["scores"].dump(), runs[0][i]["scores"].dump()) << run << " " << i;
            EXPECT_EQ(runs[run][i]["neighbors"].dump(), runs[0][i]["neighbors"].dump()) << run << " " << i;
        }
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const auto refused = run_cli("score -q --storage f16 --corpus " + shell_quote(dir) + " --ideas " +
                                 shell_quote(tmp.file("ideas.jsonl")) + " --vectors " + shell_quote(tmp.file("ideas.npy")));
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("--storage"), std::string::npos) << refused.err;
}
