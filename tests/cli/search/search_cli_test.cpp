// novelty search and novelty index end to end.
#include "novelty/corpus/corpus.hpp"
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

// A corpus of the generic fixture (8 papers) with random 6-d vectors.
std::string make_corpus(const TempDir& tmp) {
    const std::string dir = tmp.file("c");
    EXPECT_EQ(run_cli("corpus import -q --in " + shell_quote(novelty::test::fixture("import/generic.jsonl")) + " --out " +
                      shell_quote(dir))
                  .exit_code,
              0);
    const auto values = novelty::test::random_unit_rows(8, 6, 7);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 8, 6, values.data());
    EXPECT_EQ(run_cli("corpus add-vectors -q " + shell_quote(dir) + " --vectors " + shell_quote(tmp.file("v.npy"))).exit_code,
              0);
    return dir;
}

}  // namespace

TEST(SearchCli, PaperIdQueriesCutoffsAndExclusions) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    novelty::test::write_file(tmp.file("q.jsonl"),
                              "{\"id\": \"g-late\"}\n"
                              "{\"id\": \"42\", \"date\": \"2021-06\", \"exclude\": [\"g-early\"]}\n"
                              "{\"id\": \"g-year\"}\n");
    const auto result = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                                " --k 20 --exclude g-tie --out " + shell_quote(tmp.file("out.jsonl")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("3 queries had fewer than 20 searchable papers"), std::string::npos) << result.err;
    const auto lines = novelty::test::json_lines(tmp.file("out.jsonl"));
    ASSERT_EQ(lines.size(), 3u);
    // Output order is input order; the query's own paper and excluded papers never appear.
    EXPECT_EQ(lines[0]["query"], "g-late");
    EXPECT_EQ(lines[0]["neighbors"].size(), 6u);  // 8 papers - itself - g-tie
    for (const auto& line : lines)
        for (const auto& n : line["neighbors"]) {
            EXPECT_NE(n["id"], line["query"]);
            EXPECT_NE(n["id"], "g-tie");
        }
    // Cutoff 2021-06 admits rows 0-4 (g-early, 42, g-late, g-tie, g-month); minus 42 itself,
    // g-early and g-tie.
    EXPECT_EQ(lines[1]["cutoff"], "2021-06");
    EXPECT_EQ(lines[1]["searchable"], 5);
    std::vector<std::string> ids;
    for (const auto& n : lines[1]["neighbors"]) ids.push_back(n["id"]);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<std::string>{"g-late", "g-month"}));
    // Similarities descending, with titles and rows.
    const auto& n0 = lines[0]["neighbors"];
    for (std::size_t r = 1; r < n0.size(); ++r) EXPECT_GE(n0[r - 1]["sim"].get<double>(), n0[r]["sim"].get<double>());
    EXPECT_TRUE(n0[0].contains("title"));
    EXPECT_TRUE(n0[0].contains("row"));
}

TEST(SearchCli, NpyQueriesAndParallelVectors) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const novelty::Corpus corpus = novelty::Corpus::open(dir);
    std::vector<float> row(6);
    corpus.vectors().row_as_f32(3, row.data());
    novelty::write_npy(tmp.file("q.npy"), novelty::DType::f32, 1, 6, row.data());
    const auto result = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.npy")) +
                                " --k 1 --out " + shell_quote(tmp.file("out.jsonl")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto lines = novelty::test::json_lines(tmp.file("out.jsonl"));
    EXPECT_EQ(lines[0]["query"], "0");
    EXPECT_EQ(lines[0]["neighbors"][0]["row"], 3);

    // Row 42 of a .npy is query "42", which is not the corpus paper "42": a query holding that
    // paper's vector still finds it.
    std::vector<float> many(43 * 6);
    for (std::size_t i = 0; i < 43; ++i) corpus.vectors().row_as_f32(3, many.data() + i * 6);
    corpus.vectors().row_as_f32(*corpus.find_row("42"), many.data() + 42 * 6);
    novelty::write_npy(tmp.file("q43.npy"), novelty::DType::f32, 43, 6, many.data());
    ASSERT_EQ(run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q43.npy")) +
                      " --k 1 --out " + shell_quote(tmp.file("out_npy.jsonl")))
                  .exit_code,
              0);
    EXPECT_EQ(novelty::test::json_lines(tmp.file("out_npy.jsonl"))[42]["neighbors"][0]["id"], "42");
    EXPECT_NEAR(lines[0]["neighbors"][0]["sim"].get<double>(), 1.0, 1e-6);

    novelty::test::write_file(tmp.file("ideas.jsonl"), "{\"id\": \"idea\", \"title\": \"Something new\"}\n");
    const auto with_vectors = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " +
                                      shell_quote(tmp.file("ideas.jsonl")) + " --vectors " + shell_quote(tmp.file("q.npy")) +
                                      " --k 2 --out " + shell_quote(tmp.file("out2.jsonl")));
    ASSERT_EQ(with_vectors.exit_code, 0) << with_vectors.err;
    EXPECT_EQ(novelty::test::json_lines(tmp.file("out2.jsonl"))[0]["neighbors"][0]["row"], 3);
}

TEST(SearchCli, ErrorsNameTheFileAndProblem) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    novelty::test::write_file(tmp.file("text.jsonl"), "{\"id\": \"a\", \"title\": \"An idea with text\"}\n");
    // Text queries need the corpus's encoder; vectors attached from a file name none.
    auto r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("text.jsonl")));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("was embedded with 'external'; give --embedder"), std::string::npos) << r.err;
    novelty::test::write_file(tmp.file("unknown.jsonl"), "{\"id\": \"g-late\"}\n{\"id\": \"zzz\"}\n");
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("unknown.jsonl")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("unknown.jsonl:2: query 'zzz' has no text and is not the id of a corpus paper"), std::string::npos)
        << r.err;
    std::vector<float> wrong(5, 1.0f);
    novelty::write_npy(tmp.file("wrong.npy"), novelty::DType::f32, 1, 5, wrong.data());
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("wrong.npy")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("vectors have dimension 5 but the corpus has 6"), std::string::npos) << r.err;
    std::vector<float> zero(6, 0.0f);
    novelty::write_npy(tmp.file("zero.npy"), novelty::DType::f32, 1, 6, zero.data());
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("zero.npy")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("row 0 is a zero vector"), std::string::npos) << r.err;
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("zero.npy")) + " --k 0");
    EXPECT_EQ(r.exit_code, 2);
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries x.jsonl --cutoff 2021-13");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("'2021-13' is not a date (expected YYYY, YYYY-MM or YYYY-MM-DD) (--cutoff)"), std::string::npos)
        << r.err;
    // A corpus without vectors.
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(novelty::test::fixture("import/generic.jsonl")) + " --out " +
                      shell_quote(tmp.file("bare")))
                  .exit_code,
              0);
    r = run_cli("search --corpus " + shell_quote(tmp.file("bare")) + " --queries " + shell_quote(tmp.file("zero.npy")));
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_NE(r.err.find("no vectors"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("out.jsonl")));
}

TEST(IndexCli, ComputesThenLoadsAndChecksQ) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    auto r = run_cli("index -q " + shell_quote(dir) + " --q 3");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("computed"), std::string::npos) << r.out;
    r = run_cli("index -q " + shell_quote(dir) + " --q 3");
    EXPECT_NE(r.out.find("loaded from the cache"), std::string::npos) << r.out;
    r = run_cli("index -q " + shell_quote(dir) + " --q 3 --cutoff 2021-06-15");
    EXPECT_NE(r.out.find("of 4 papers"), std::string::npos) << r.out;
    r = run_cli("index -q " + shell_quote(dir) + " --q 8");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--q 8 needs more than 8 papers"), std::string::npos) << r.err;
}

TEST(EmbedCli, EmbedsCorporaRecordsAndTextQueriesWithOneEncoder) {
    TempDir tmp;
    const std::string model = novelty::test::fixture("encoder/tiny-bert-cls");
    const std::string dir = tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(novelty::test::fixture("import/generic.jsonl")) + " --out " +
                      shell_quote(dir))
                  .exit_code,
              0);
    auto r = run_cli("corpus embed -q " + shell_quote(dir) + " --embedder " + shell_quote(model) + " --batch 3");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("embedded 8 papers with tiny-bert-cls (dim 16, cls pooling)"), std::string::npos) << r.out;

    // `novelty embed` gives the same vector for the same title and text.
    novelty::test::write_file(tmp.file("recs.jsonl"),
                              "{\"id\": \"x\", \"title\": \"Sparse attention for long documents\", "
                              "\"text\": \"We study sparse attention patterns.\"}\n"
                              "{\"id\": \"y\", \"text\": \"Something else entirely.\"}\n");
    r = run_cli("embed -q --in " + shell_quote(tmp.file("recs.jsonl")) + " --embedder " + shell_quote(model) + " --out " +
                shell_quote(tmp.file("recs.npy")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const novelty::NpyMatrix recs = novelty::NpyMatrix::open(tmp.file("recs.npy"));
    ASSERT_EQ(recs.rows(), 2u);
    ASSERT_EQ(recs.cols(), 16u);
    const novelty::Corpus corpus = novelty::Corpus::open(dir);
    std::vector<float> a(16), b(16);
    recs.row_as_f32(0, a.data());
    corpus.vectors().row_as_f32(*corpus.find_row("g-late"), b.data());
    for (std::size_t c = 0; c < 16; ++c) EXPECT_NEAR(a[c], b[c], 1e-6);

    // A text query is embedded with the corpus's encoder and finds that paper first.
    novelty::test::write_file(tmp.file("q.jsonl"),
                              "{\"id\": \"q\", \"title\": \"Sparse attention for long documents\", "
                              "\"text\": \"We study sparse attention patterns.\"}\n");
    r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                " --embedder " + shell_quote(model) + " --k 1 --out " + shell_quote(tmp.file("out.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(novelty::test::json_lines(tmp.file("out.jsonl"))[0]["neighbors"][0]["id"], "g-late");
    // Another encoder for the queries is refused.
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                " --embedder " + shell_quote(tmp.file("nowhere")));
    EXPECT_NE(r.exit_code, 0);
    // Records without text cannot be embedded.
    novelty::test::write_file(tmp.file("bare.jsonl"), "{\"id\": \"z\"}\n");
    r = run_cli("embed --in " + shell_quote(tmp.file("bare.jsonl")) + " --embedder " + shell_quote(model) + " --out " +
                shell_quote(tmp.file("bare.npy")));
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("bare.jsonl:1: record 'z' has no title or text"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("bare.npy")));
}

TEST(SearchCli, ManyBatchesAreWrittenInInputOrderAsTheyAreSearched) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    // 9,000 queries: three batches, each written by the output thread while the next is searched.
    const auto values = novelty::test::random_unit_rows(9000, 6, 91);
    novelty::write_npy(tmp.file("q.npy"), novelty::DType::f32, 9000, 6, values.data());
    const auto r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.npy")) +
                           " --k 3 --out " + shell_quote(tmp.file("out.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(tmp.file("out.jsonl"));
    ASSERT_EQ(lines.size(), 9000u);
    for (std::size_t i = 0; i < lines.size(); i += 997) {
        EXPECT_EQ(lines[i]["query"], std::to_string(i));
        // The nearest paper is the reference's.
        const auto want = novelty::test::reference_topk(novelty::VectorView::of(novelty::NpyMatrix::open(dir + "/vectors.npy")),
                                                        values.data() + i * 6, 8, {}, 1);
        EXPECT_EQ(lines[i]["neighbors"][0]["row"], want[0].row) << i;
    }
    EXPECT_EQ(lines.back()["query"], "8999");
}

TEST(SearchCli, ResumeKeepsFinishedQueriesAndWritesWhatAFullRunWrites) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const auto values = novelty::test::random_unit_rows(40, 6, 17);
    novelty::write_npy(tmp.file("q.npy"), novelty::DType::f32, 40, 6, values.data());
    const std::string base = "search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.npy")) +
                             " --k 3 --out ";
    ASSERT_EQ(run_cli(base + shell_quote(tmp.file("full.jsonl"))).exit_code, 0);
    const std::string full = novelty::test::read_file(tmp.file("full.jsonl"));
    std::vector<std::string> lines;
    {
        std::istringstream in(full);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 40u);
    // An interrupted run: queries 0-9 finished (query 3's line marked, to show it is kept and not
    // searched again), then a line cut short.
    std::string partial;
    for (std::size_t i = 0; i < 10; ++i) partial += (i == 3 ? lines[i].substr(0, lines[i].size() - 1) + ",\"kept\":1}" : lines[i]) + "\n";
    partial += lines[10].substr(0, 20);
    const std::string out = tmp.file("out.jsonl");
    novelty::test::write_file(out + ".partial", partial);
    auto r = run_cli(base + shell_quote(out));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
    r = run_cli(base + shell_quote(out) + " --resume");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("wrote 40 results to " + out + " (10 from an earlier run)"), std::string::npos) << r.err;
    std::string expected;
    for (std::size_t i = 0; i < 40; ++i) expected += (i == 3 ? lines[i].substr(0, lines[i].size() - 1) + ",\"kept\":1}" : lines[i]) + "\n";
    EXPECT_EQ(novelty::test::read_file(out), expected);
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
    // Arrays are written whole: nothing to resume.
    r = run_cli(base + shell_quote(tmp.file("a.npz")) + " --resume");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--resume continues a JSON Lines --out file"), std::string::npos) << r.err;
}
