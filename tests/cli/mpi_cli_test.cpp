// The commands under mpirun: 2 and 3 ranks write byte-identical outputs to one process (search
// results, the index cache, score records, retrieve runs) on the demo corpus and on random data
// with cutoffs, exclusions and ties across shards; ranks holding fewer than k rows; an error one
// shard alone sees ends every rank with its message and exit code. Skipped without MPI.
#include "novelty/shard/shard.hpp"
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "cli_corpora.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

using novelty::test::read_file;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using novelty::test::write_file;
namespace fs = std::filesystem;

namespace {

bool mpi_ready() {
    return novelty::mpi_compiled() && std::system("command -v mpirun > /dev/null 2>&1") == 0;
}

// Runs `launch` (an mpirun line or the CLI alone) with a time limit, so a hang fails the test.
novelty::test::CliResult run_line(const std::string& launch, const TempDir& tmp) {
    const std::string out = tmp.file("stdout.txt"), err = tmp.file("stderr.txt");
    const std::string line = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 " + launch + " > " +
                             shell_quote(out) + " 2> " + shell_quote(err);
    const int status = std::system(line.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
}

std::string mpirun(int n_ranks) {
    return "mpirun --oversubscribe --bind-to none -np " + std::to_string(n_ranks) + " ";
}

const std::string cli = shell_quote(NOVELTY_CLI_PATH);

// Runs `args` in one process, then under 2 and 3 ranks: `out_file` must be the same bytes.
void expect_same_file(const TempDir& tmp, const std::string& args, const std::string& out_file,
                      const std::string& env = "") {
    auto one = run_line(env + cli + " " + args, tmp);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const std::string expected = read_file(out_file);
    ASSERT_FALSE(expected.empty());
    for (int n_ranks : {2, 3}) {
        fs::remove(out_file);
        auto sharded = run_line(env + mpirun(n_ranks) + cli + " " + args, tmp);
        ASSERT_EQ(sharded.exit_code, 0) << n_ranks << " ranks: " << sharded.err;
        EXPECT_TRUE(read_file(out_file) == expected) << n_ranks << " ranks: " << args;
    }
}

// The self-join cache `index` writes, computed afresh in a copy of the corpus.
std::string index_cache(const TempDir& tmp, const std::string& corpus, const std::string& name, const std::string& launch,
                        const std::string& flags) {
    const std::string copy = tmp.file(name);
    fs::remove_all(copy);
    fs::copy(corpus, copy, fs::copy_options::recursive);
    fs::remove_all(copy + "/cache");
    auto result = run_line(launch + cli + " index " + shell_quote(copy) + " -q " + flags, tmp);
    EXPECT_EQ(result.exit_code, 0) << launch << result.err;
    for (const auto& entry : fs::directory_iterator(copy + "/cache"))
        if (entry.path().extension() == ".bin") return read_file(entry.path().string());
    ADD_FAILURE() << "no cache written by " << launch;
    return "";
}

void expect_same_cache(const TempDir& tmp, const std::string& corpus, const std::string& flags,
                       const std::string& env = "") {
    const std::string expected = index_cache(tmp, corpus, "one", env, flags);
    for (int n_ranks : {2, 3})
        EXPECT_TRUE(index_cache(tmp, corpus, "ranks" + std::to_string(n_ranks), env + mpirun(n_ranks), flags) == expected)
            << n_ranks << " ranks, index " << flags;
}

class MpiCli : public ::testing::Test {
protected:
    void SetUp() override {
        if (!mpi_ready()) GTEST_SKIP() << "no MPI in this build or no mpirun";
    }
    TempDir tmp;
};


}  // namespace

TEST_F(MpiCli, RandomCorpusSearchAndIndexWithCutoffsExclusionsAndTies) {
    const std::string corpus = novelty::test::random_corpus(tmp, 400, 24, true);
    std::string queries;
    for (int i = 0; i < 60; ++i)
        queries += "{\"id\": \"p" + std::to_string(i * 6) + "\"" + (i % 2 ? ", \"date\": \"" + std::to_string(2005 + i % 15) + "\"" : "") +
                   (i % 3 == 0 ? ", \"exclude\": [\"p" + std::to_string(i * 6 + 7) + "\", \"p3\"]" : "") + "}\n";
    write_file(tmp.file("q.jsonl"), queries);
    const std::string args = "search --corpus " + shell_quote(corpus) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                             " --k 30 --exclude p10 -q --out ";
    expect_same_file(tmp, args + shell_quote(tmp.file("hits.jsonl")), tmp.file("hits.jsonl"));
    expect_same_file(tmp, args + shell_quote(tmp.file("hits.npz")), tmp.file("hits.npz"));
    // Small self-join blocks cross block boundaries; a cutoff makes the join a prefix.
    expect_same_cache(tmp, corpus, "--q 6", "env NOVELTY_SHARD_BLOCK=37 ");
    expect_same_cache(tmp, corpus, "--q 4 --cutoff 2011", "env NOVELTY_SHARD_BLOCK=50 ");
}

TEST_F(MpiCli, OnDemandDensitiesEqualTheFullSelfJoinUnderTwoAndThreeRanks) {
    // Ideas (corpus papers, each left out of its own search) at many distinct cutoffs, with
    // exclusions (some beyond the stored extras) and exact ties: the density store's on-demand
    // densities, in one process and under 2 and 3 ranks, and a second run reading them back, all
    // write the bytes of the full self-join path.
    const std::string corpus = novelty::test::random_corpus(tmp, 400, 24, true);
    std::string ideas;
    for (int i = 0; i < 45; ++i) {
        ideas += "{\"id\": \"p" + std::to_string(i * 8 + 3) + "\"";
        if (i % 5) ideas += ", \"date\": \"" + std::to_string(2008 + i % 12) + "-0" + std::to_string(1 + i % 9) + "-2" +
                            std::to_string(i % 8) + "\"";
        if (i % 4 == 1) {
            ideas += ", \"exclude\": [";
            for (int e = 0; e < 14; ++e) ideas += std::string(e ? ", " : "") + "\"p" + std::to_string((i * 37 + e * 11) % 400) + "\"";
            ideas += "]";
        }
        ideas += "}\n";
    }
    write_file(tmp.file("ideas.jsonl"), ideas);
    auto score = [&](const std::string& launch, const std::string& copy, const std::string& densities, bool fresh) {
        if (fresh) {
            fs::remove_all(tmp.file(copy));
            fs::copy(corpus, tmp.file(copy), fs::copy_options::recursive);
            fs::remove_all(tmp.file(copy) + "/cache");
        }
        auto result = run_line(launch + cli + " score --corpus " + shell_quote(tmp.file(copy)) + " --ideas " +
                                   shell_quote(tmp.file("ideas.jsonl")) + " --p 12 --q 6 --extra 4 --densities " +
                                   densities + " --methods rnd,hd,density,rel_hd -q --out " +
                                   shell_quote(tmp.file(copy + ".jsonl")),
                               tmp);
        EXPECT_EQ(result.exit_code, 0) << launch << result.err;
        return novelty::test::without_densities_path(read_file(tmp.file(copy + ".jsonl")));
    };
    const std::string reference = score("", "full", "self-join", true);
    ASSERT_FALSE(reference.empty());
    EXPECT_TRUE(score("", "one", "on-demand", true) == reference);
    EXPECT_TRUE(score("", "one", "on-demand", false) == reference) << "read back from the store";
    EXPECT_TRUE(score("", "auto", "auto", true) == reference) << "chosen by cost";
    for (int n_ranks : {2, 3}) {
        const std::string copy = "ranks" + std::to_string(n_ranks);
        EXPECT_TRUE(score(mpirun(n_ranks), copy, "on-demand", true) == reference) << n_ranks << " ranks";
        EXPECT_TRUE(score(mpirun(n_ranks), copy, "on-demand", false) == reference) << n_ranks << " ranks, second run";
        EXPECT_TRUE(score(mpirun(n_ranks), copy, "auto", true) == reference) << n_ranks << " ranks, chosen by cost";
    }
}

TEST_F(MpiCli, DemoCorpusSearchIndexScoreAndRetrieveAreIdentical) {
    const std::string demo = std::string(NOVELTY_SOURCE_DIR) + "/data/demo/";
    const std::string corpus = tmp.file("demo");
    ASSERT_EQ(run_line(cli + " corpus import -q --format paperlists openalex --field ml biomed --in " +
                           shell_quote(demo + "ml_papers_demo.jsonl.gz") + " " + shell_quote(demo + "biomed_demo.jsonl.gz") +
                           " --out " + shell_quote(corpus), tmp).exit_code, 0);
    ASSERT_EQ(run_line(cli + " corpus add-vectors -q " + shell_quote(corpus) + " --vectors " +
                           shell_quote(demo + "vectors_minilm_f16.npy") + " --ids " + shell_quote(demo + "vector_ids.txt") +
                           " --embedder all-MiniLM-L6-v2 --pooling mean", tmp).exit_code, 0);
    // Queries naming demo papers (each leaves itself out), with cutoffs and exclusions.
    std::ifstream ids_file(demo + "vector_ids.txt");
    std::vector<std::string> ids;
    for (std::string id; std::getline(ids_file, id);) ids.push_back(id);
    std::string queries;
    for (std::size_t i = 0; i < 40; ++i)
        queries += "{\"id\": \"" + ids[i * 80 + 5] + "\"" + (i % 2 ? ", \"date\": \"2019-06\"" : "") +
                   (i % 3 ? ", \"exclude\": [\"" + ids[i * 80 + 6] + "\"]" : "") + "}\n";
    write_file(tmp.file("q.jsonl"), queries);
    expect_same_file(tmp, "search --corpus " + shell_quote(corpus) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                              " --k 25 --cutoff 2023 -q --out " + shell_quote(tmp.file("hits.jsonl")),
                     tmp.file("hits.jsonl"));
    expect_same_cache(tmp, corpus, "--q 10");
    // Ideas and retrieval queries with given vectors (no encoder): score computes its own
    // self-join in a fresh copy each time.
    const auto idea_vectors = novelty::test::random_unit_rows(20, 384, 4);
    novelty::write_npy(tmp.file("ideas.npy"), novelty::DType::f32, 20, 384, idea_vectors.data());
    for (const std::string& name : {"s1", "s2", "s3"}) {
        fs::copy(corpus, tmp.file(name), fs::copy_options::recursive);
        fs::remove_all(tmp.file(name) + "/cache");
    }
    auto score = [&](const std::string& launch, const std::string& copy) {
        auto result = run_line(launch + cli + " score --corpus " + shell_quote(tmp.file(copy)) + " --ideas " +
                                   shell_quote(std::string(NOVELTY_SOURCE_DIR) + "/data/ideas.jsonl") + " --vectors " +
                                   shell_quote(tmp.file("ideas.npy")) + " --p 20 --q 10 --cutoff 2022 -q --out " +
                                   shell_quote(tmp.file(copy + ".jsonl")),
                               tmp);
        EXPECT_EQ(result.exit_code, 0) << launch << result.err;
        return read_file(tmp.file(copy + ".jsonl"));
    };
    const std::string scores = score("", "s1");
    EXPECT_TRUE(score(mpirun(2), "s2") == scores);
    EXPECT_TRUE(score(mpirun(3), "s3") == scores);
    const auto query_vectors = novelty::test::random_unit_rows(24, 384, 8);
    novelty::write_npy(tmp.file("rq.npy"), novelty::DType::f32, 24, 384, query_vectors.data());
    expect_same_file(tmp, "retrieve --corpus " + shell_quote(corpus) + " --queries " +
                              shell_quote(std::string(NOVELTY_SOURCE_DIR) + "/data/retrieval/queries.jsonl") +
                              " --vectors " + shell_quote(tmp.file("rq.npy")) + " --k 20 --out " + shell_quote(tmp.file("run.txt")),
                     tmp.file("run.txt"));
}

TEST_F(MpiCli, RanksHoldingFewerThanKRowsStillAnswerRight) {
    const std::string corpus = novelty::test::random_corpus(tmp, 8, 6, true);  // 3 ranks: 3, 3 and 2 rows each
    write_file(tmp.file("q.jsonl"), "{\"id\": \"p0\"}\n{\"id\": \"p5\", \"date\": \"2012\"}\n{\"id\": \"p7\"}\n");
    expect_same_file(tmp, "search --corpus " + shell_quote(corpus) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                              " --k 20 -q --out " + shell_quote(tmp.file("few.jsonl")),
                     tmp.file("few.jsonl"));
    expect_same_cache(tmp, corpus, "--q 3");
}

// An error only one shard sees: rank 1 runs in another directory, where the corpus (the same
// relative path) has a damaged vectors file. Every rank ends, with the corpus error's code.
TEST_F(MpiCli, AnErrorOnOneShardEndsEveryRank) {
    const std::string corpus = novelty::test::random_corpus(tmp, 30, 6, true);
    fs::create_directories(tmp.file("a"));
    fs::create_directories(tmp.file("b"));
    fs::copy(corpus, tmp.file("a/c"), fs::copy_options::recursive);
    fs::copy(corpus, tmp.file("b/c"), fs::copy_options::recursive);
    fs::resize_file(tmp.file("b/c/vectors.npy"), fs::file_size(tmp.file("b/c/vectors.npy")) - 24);
    write_file(tmp.file("q.jsonl"), "{\"id\": \"p3\"}\n");
    const std::string args = " search --corpus c --queries " + shell_quote(tmp.file("q.jsonl")) + " --k 5 --out " +
                             shell_quote(tmp.file("out.jsonl"));
    const auto result = run_line("mpirun --oversubscribe --bind-to none -np 1 -wdir " + shell_quote(tmp.file("a")) + " " + cli +
                                     args + " : -np 1 -wdir " + shell_quote(tmp.file("b")) + " " + cli + args,
                                 tmp);
    EXPECT_EQ(result.exit_code, 4) << result.err;  // a corpus error
    EXPECT_NE(result.err.find("(on rank 1)"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("vectors.npy"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(tmp.file("out.jsonl")));
    // A bad query record, seen by rank 0: every rank ends with the input error's code.
    write_file(tmp.file("bad.jsonl"), "{\"id\": \"p3\"}\n{\"id\": \"p4\", \"date\": \"not a date\"}\n");
    const auto bad = run_line(mpirun(3) + cli + " search --corpus " + shell_quote(corpus) + " --queries " +
                                  shell_quote(tmp.file("bad.jsonl")) + " --k 5 --out " + shell_quote(tmp.file("out.jsonl")),
                              tmp);
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_NE(bad.err.find("bad.jsonl:2"), std::string::npos) << bad.err;
}

// Ranks whose shard sits on the emulated CUDA device (--device cuda-emulated): the sharded
// index's merge over CUDA ranks gives the bytes one emulated process writes for a search with
// cutoffs, exclusions and exact ties, at 16-bit storage (the final k re-scored on the device) and
// at float32, and for the index's self-join at float32; and at float32 the search writes the CPU's bytes.
// (A 16-bit self-join picks each rank's k by the rounded products before re-scoring them, so
// ranks may keep other rows at the k-th place than one process: only float32 is compared.)
TEST_F(MpiCli, EmulatedCudaRanksAnswerAsOneEmulatedProcess) {
    const std::string corpus = novelty::test::random_corpus(tmp, 300, 24, true);
    std::string queries;
    for (int i = 0; i < 40; ++i)
        queries += "{\"id\": \"p" + std::to_string(i * 7) + "\"" + (i % 2 ? ", \"date\": \"" + std::to_string(2004 + i % 15) + "\"" : "") +
                   (i % 3 == 0 ? ", \"exclude\": [\"p" + std::to_string(i * 7 + 7) + "\"]" : "") + "}\n";
    write_file(tmp.file("q.jsonl"), queries);
    for (const std::string storage : {"f16", "f32"}) {
        SCOPED_TRACE(storage);
        const std::string args = "search --corpus " + shell_quote(corpus) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                                 " --k 20 -q --device cuda-emulated --device-storage " + storage + " --out ";
        expect_same_file(tmp, args + shell_quote(tmp.file("hits.npz")), tmp.file("hits.npz"));
        if (storage == "f32")
            expect_same_cache(tmp, corpus, "--q 5 --device cuda-emulated --device-storage f32",
                              "env NOVELTY_SHARD_BLOCK=41 ");
    }
    const std::string cpu = "search --corpus " + shell_quote(corpus) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                            " --k 20 -q --device cpu --out " + shell_quote(tmp.file("cpu.jsonl"));
    ASSERT_EQ(run_line(cli + " " + cpu, tmp).exit_code, 0);
    const std::string emulated = "search --corpus " + shell_quote(corpus) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                                 " --k 20 -q --device cuda-emulated --device-storage f32 --out " +
                                 shell_quote(tmp.file("emu.jsonl"));
    ASSERT_EQ(run_line(mpirun(2) + cli + " " + emulated, tmp).exit_code, 0);
    // The emulated device's float32 tiles are the CPU's fixed-order dot products: the same bytes.
    EXPECT_TRUE(read_file(tmp.file("emu.jsonl")) == read_file(tmp.file("cpu.jsonl")));
}
