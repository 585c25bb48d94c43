// Corpus integrity (issue 22): add-vectors follows the import's input order, caches and corpus
// files are checked against their checksums, outputs never overwrite inputs, --overwrite keeps
// foreign files, and an import interrupted between its renames is repaired.
#include "corpus/corpus_lock.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"
#include "json_lines.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unistd.h>

namespace fs = std::filesystem;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

// `n` records whose dates run backwards, so input order is the reverse of corpus row order.
std::string records(std::size_t n, const std::string& prefix = "p") {
    static const char* words[] = {"graph", "neural", "protein", "language", "robot", "vision", "quantum", "market",
                                  "climate", "speech", "genome", "traffic", "galaxy", "music", "cancer", "energy"};
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
        out += "{\"id\": \"" + prefix + std::to_string(i) + "\", \"title\": \"" + words[i % 16] + " " + words[(i * 7 + 3) % 16] +
               " study " + std::to_string(i) + "\", \"abstract\": \"We study " + words[(i * 5 + 1) % 16] + " with " +
               words[(i * 3 + 2) % 16] + " methods.\", \"year\": " + std::to_string(2020 - static_cast<int>(i % 15)) + "}\n";
    return out;
}

std::string import_cmd(const std::string& in, const std::string& out) {
    return "corpus import -q --in " + shell_quote(in) + " --out " + shell_quote(out);
}

// A corpus of n papers with random vectors given in input order; returns its directory.
std::string corpus_with_vectors(const TempDir& tmp, std::size_t n, std::size_t dim) {
    novelty::test::write_file(tmp.file("papers.jsonl"), records(n));
    EXPECT_EQ(run_cli(import_cmd(tmp.file("papers.jsonl"), tmp.file("c"))).exit_code, 0);
    const auto v = novelty::test::random_unit_rows(n, dim, 11);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, n, dim, v.data());
    const auto r = run_cli("corpus add-vectors -q " + shell_quote(tmp.file("c")) + " --vectors " + shell_quote(tmp.file("v.npy")));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return tmp.file("c");
}

void flip_byte(const std::string& path, std::size_t offset) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x55);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&c, 1);
}

}  // namespace

TEST(CorpusIntegrity, EmbeddedVectorsAttachedWithoutIdsLandOnTheirOwnPapers) {
    TempDir tmp;
    const std::size_t n = 24;
    novelty::test::write_file(tmp.file("papers.jsonl"), records(n));
    ASSERT_EQ(run_cli(import_cmd(tmp.file("papers.jsonl"), tmp.file("c"))).exit_code, 0);
    // The natural flow: embed the same file (row i = line i), attach without --ids.
    const auto e = run_cli("embed -q --threads 1 --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " +
                           shell_quote(tmp.file("e.npy")));
    ASSERT_EQ(e.exit_code, 0) << e.err;
    const auto a = run_cli("corpus add-vectors -q " + shell_quote(tmp.file("c")) + " --vectors " + shell_quote(tmp.file("e.npy")) +
                           " --embedder all-MiniLM-L6-v2 --pooling mean");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    // Each paper's own vector finds the paper itself first.
    const auto s = run_cli("search -q --corpus " + shell_quote(tmp.file("c")) + " --queries " + shell_quote(tmp.file("e.npy")) +
                           " --k 1 --out " + shell_quote(tmp.file("hits.jsonl")));
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const auto hits = novelty::test::json_lines(tmp.file("hits.jsonl"));
    ASSERT_EQ(hits.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(hits[i]["neighbors"][0]["id"], "p" + std::to_string(i)) << "vector row " << i;
        EXPECT_GT(hits[i]["neighbors"][0]["sim"].get<double>(), 0.9999);
    }
    // Corpus row order is not the input order here, so corpus order would have misattributed them.
    EXPECT_NE(hits[0]["neighbors"][0]["row"], 0);
}

TEST(CorpusIntegrity, AddVectorsRefusesToGuessWhenTheInputOrderIsUnknown) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("a.jsonl"), records(6, "a"));
    novelty::test::write_file(tmp.file("b.jsonl"), records(6, "b"));
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("a.jsonl")) + " " + shell_quote(tmp.file("b.jsonl")) +
                      " --out " + shell_quote(tmp.file("c")))
                  .exit_code,
              0);
    const auto v = novelty::test::random_unit_rows(12, 4, 3);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 12, 4, v.data());
    const std::string add = "corpus add-vectors -q " + shell_quote(tmp.file("c")) + " --vectors " + shell_quote(tmp.file("v.npy"));
    auto r = run_cli(add);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("imported from 2 files"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--ids"), std::string::npos) << r.err;
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).manifest().dim, 0u) << "nothing attached";
    r = run_cli(add + " --order corpus");
    EXPECT_EQ(r.exit_code, 0) << r.err;

    // A corpus from before the input order was recorded: refused too.
    const std::string manifest_path = tmp.file("c/manifest.json");
    auto manifest = nlohmann::json::parse(novelty::test::read_file(manifest_path));
    manifest.erase("input_order");
    manifest["sources"] = nlohmann::json::array({manifest["sources"][0]});
    novelty::test::write_file(manifest_path, manifest.dump());
    r = run_cli(add);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("does not record the input order"), std::string::npos) << r.err;
}

TEST(CorpusIntegrity, AnIdsFileWithAByteOrderMarkIsRead) {
    TempDir tmp;
    const std::string dir = corpus_with_vectors(tmp, 5, 4);
    novelty::test::write_file(tmp.file("ids.txt"), "\xEF\xBB\xBFp4\np3\np2\np1\np0\n");
    const auto r = run_cli("corpus add-vectors -q " + shell_quote(dir) + " --vectors " + shell_quote(tmp.file("v.npy")) +
                           " --ids " + shell_quote(tmp.file("ids.txt")));
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The self-join cache of `novelty index` is optional since densities are computed on demand: a
// damaged one is reported by name and not used, the densities it held are computed again (the
// scores equal a clean run's, so none of the tampered similarities reached them), and `corpus info
// --verify` still refuses it until `novelty index` writes it again.
TEST(CorpusIntegrity, ADamagedNeighbourCacheIsReportedNotUsedAndRebuilt) {
    TempDir tmp;
    const std::string dir = corpus_with_vectors(tmp, 40, 6);
    ASSERT_EQ(run_cli("index -q " + shell_quote(dir) + " --q 5 --extra 2").exit_code, 0);
    std::string cache;
    for (const auto& entry : fs::directory_iterator(fs::path(dir) / "cache"))
        if (entry.path().filename().string().rfind("selfjoin-", 0) == 0) cache = entry.path().string();
    ASSERT_FALSE(cache.empty());
    novelty::test::write_file(tmp.file("ideas.jsonl"), "{\"id\": \"i1\"}\n{\"id\": \"i2\"}\n");
    const auto ideas = novelty::test::random_unit_rows(2, 6, 5);
    novelty::write_npy(tmp.file("ideas.npy"), novelty::DType::f32, 2, 6, ideas.data());
    const std::string score = "score -q --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                              " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 10 --q 5 --extra 2 --out ";
    const std::string score_1 = score + shell_quote(tmp.file("s1.jsonl")), score_2 = score + shell_quote(tmp.file("s2.jsonl"));
    const auto first = run_cli(score_1);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto before = novelty::test::json_lines(tmp.file("s1.jsonl"));

    // Add 0.5 to every similarity without changing the length (the probe).
    std::string bytes = novelty::test::read_file(cache);
    const std::size_t header = 8 + 64 + 24 + 16, n = 40 * 7;
    for (std::size_t i = 0; i < n; ++i) {
        float s;
        std::memcpy(&s, bytes.data() + header + n * 4 + i * 4, 4);
        s += 0.5f;
        std::memcpy(bytes.data() + header + n * 4 + i * 4, &s, 4);
    }
    novelty::test::write_file(cache, bytes);

    auto r = run_cli(score_2);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(fs::path(cache).filename().string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;
    const auto damaged = novelty::test::json_lines(tmp.file("s2.jsonl"));
    for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(damaged[i]["scores"], before[i]["scores"]);
    r = run_cli("corpus info " + shell_quote(dir) + " --verify");
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_NE(r.err.find("cache/" + fs::path(cache).filename().string() + " does not match"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("(DAMAGED)"), std::string::npos) << r.out;

    r = run_cli("index -q " + shell_quote(dir) + " --q 5 --extra 2");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("computing it again"), std::string::npos) << r.err;
    EXPECT_EQ(run_cli("corpus info " + shell_quote(dir) + " --verify").exit_code, 0);
    r = run_cli(score + shell_quote(tmp.file("s3.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto after = novelty::test::json_lines(tmp.file("s3.jsonl"));
    for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(after[i]["scores"], before[i]["scores"]);
}

TEST(CorpusIntegrity, EveryOpenChecksTheFilesAgainstTheManifest) {
    TempDir tmp;
    const std::string dir = corpus_with_vectors(tmp, 12, 4);
    const std::string search = "search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("v.npy")) +
                               " --k 2 --out " + shell_quote(tmp.file("h.jsonl"));
    ASSERT_EQ(run_cli(search).exit_code, 0);
    const std::string vectors = dir + "/vectors.npy";
    const std::string good = novelty::test::read_file(vectors);

    // Other vectors of the same shape, as a kill between the rename and the manifest leaves.
    const auto other = novelty::test::random_unit_rows(12, 4, 99);
    novelty::write_npy(vectors, novelty::DType::f32, 12, 4, other.data());
    auto r = run_cli(search);
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_NE(r.err.find("vectors.npy is not the file manifest.json describes"), std::string::npos) << r.err;
    // A shorter file.
    novelty::test::write_file(vectors, good.substr(0, good.size() - 16));
    r = run_cli(search);
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_NE(r.err.find("vectors.npy is " + std::to_string(good.size() - 16) + " bytes"), std::string::npos) << r.err;
    // A corrupt header in a corpus whose manifest has no fingerprints (an older corpus): exit 4.
    const std::string manifest_text = novelty::test::read_file(dir + "/manifest.json");
    auto manifest = nlohmann::json::parse(manifest_text);
    manifest.erase("fingerprints");
    novelty::test::write_file(dir + "/manifest.json", manifest.dump());
    std::string broken = good;
    broken[8] = 'X';  // header length
    broken[9] = 'X';
    novelty::test::write_file(vectors, broken);
    r = run_cli(search);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("vectors.npy is damaged"), std::string::npos) << r.err;
    novelty::test::write_file(vectors, good);
    novelty::test::write_file(dir + "/manifest.json", manifest_text);
    EXPECT_EQ(run_cli(search).exit_code, 0);

    // papers.sqlite: one flipped byte in a small file changes its sampled checksum.
    flip_byte(dir + "/papers.sqlite", 5000);
    r = run_cli(search);
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_NE(r.err.find("papers.sqlite is not the file manifest.json describes"), std::string::npos) << r.err;
}

TEST(CorpusIntegrity, VerifyNamesTheFileThatDoesNotMatch) {
    TempDir tmp;
    const std::string dir = corpus_with_vectors(tmp, 8, 4);
    // Change vectors.npy and its fingerprint together: only the full checksum can tell.
    auto manifest = nlohmann::json::parse(novelty::test::read_file(dir + "/manifest.json"));
    manifest.erase("fingerprints");
    novelty::test::write_file(dir + "/manifest.json", manifest.dump());
    flip_byte(dir + "/vectors.npy", 200);
    const auto r = run_cli("corpus info " + shell_quote(dir) + " --verify");
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_NE(r.err.find(": vectors.npy does not match its checksum"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("vectors.npy " + manifest["checksums"]["vectors.npy"].get<std::string>() + " (MISMATCH)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("papers.sqlite " + manifest["checksums"]["papers.sqlite"].get<std::string>() + " (verified)"),
              std::string::npos);
}

TEST(CorpusIntegrity, NoCommandWritesItsOutputOverItsInput) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("x.jsonl"), records(3));
    const std::string original = novelty::test::read_file(tmp.file("x.jsonl"));
    fs::create_symlink(tmp.file("x.jsonl"), tmp.file("link.jsonl"));
    for (const std::string& out : {tmp.file("x.jsonl"), tmp.path().string() + "/./x.jsonl", tmp.file("link.jsonl")}) {
        const auto r = run_cli("embed -q --in " + shell_quote(tmp.file("x.jsonl")) + " --out " + shell_quote(out));
        EXPECT_EQ(r.exit_code, 2) << out;
        EXPECT_NE(r.err.find("is the input file"), std::string::npos) << r.err;
    }
    EXPECT_EQ(novelty::test::read_file(tmp.file("x.jsonl")), original);
    const std::string dir = corpus_with_vectors(tmp, 6, 4);
    novelty::test::write_file(tmp.file("q.jsonl"), "{\"id\": \"p1\"}\n");
    const auto r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                           " --out " + shell_quote(tmp.file("q.jsonl")));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(novelty::test::read_file(tmp.file("q.jsonl")), "{\"id\": \"p1\"}\n");
}

TEST(CorpusIntegrity, OverwriteRefusesAFolderHoldingOtherFilesAndATrailingSlashWorks) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("a.jsonl"), records(4, "a"));
    novelty::test::write_file(tmp.file("b.jsonl"), records(5, "b"));
    // --out DIR/ makes DIR, and leaves nothing behind that blocks a re-run.
    auto r = run_cli(import_cmd(tmp.file("a.jsonl"), tmp.file("c") + "/"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).size(), 4u);
    for (const auto& entry : fs::directory_iterator(tmp.file("c")))
        EXPECT_EQ(entry.path().filename().string().find("importing"), std::string::npos) << entry.path();
    r = run_cli(import_cmd(tmp.file("b.jsonl"), tmp.file("c") + "/") + " --overwrite");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c") + "/").size(), 5u);

    novelty::test::write_file(tmp.file("c/notes.txt"), "mine");
    r = run_cli(import_cmd(tmp.file("a.jsonl"), tmp.file("c")) + " --overwrite");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("notes.txt"), std::string::npos) << r.err;
    EXPECT_EQ(novelty::test::read_file(tmp.file("c/notes.txt")), "mine");
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).size(), 5u) << "the old corpus is untouched";
    for (const auto& entry : fs::directory_iterator(tmp.path()))
        EXPECT_EQ(entry.path().filename().string().find(".importing-"), std::string::npos) << entry.path();
}

TEST(CorpusIntegrity, AnImportKilledBetweenItsRenamesIsRepairedOnTheNextOpen) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("a.jsonl"), records(4, "a"));
    novelty::test::write_file(tmp.file("b.jsonl"), records(5, "b"));
    ASSERT_EQ(run_cli(import_cmd(tmp.file("a.jsonl"), tmp.file("old"))).exit_code, 0);
    ASSERT_EQ(run_cli(import_cmd(tmp.file("b.jsonl"), tmp.file("new"))).exit_code, 0);
    const std::string dead = "999999999";  // above any pid_max: no such process
    // Killed after moving the old corpus away, before its own build was complete: restored.
    fs::copy(tmp.file("old"), tmp.file("c.replaced-" + dead), fs::copy_options::recursive);
    fs::create_directories(tmp.file("c.importing-" + dead));
    novelty::test::write_file(tmp.file("c.importing-" + dead + "/papers.sqlite"), "half");
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).size(), 4u);
    EXPECT_FALSE(fs::exists(tmp.file("c.replaced-" + dead)));
    EXPECT_FALSE(fs::exists(tmp.file("c.importing-" + dead)));
    // Killed between the renames with the new corpus complete: completed, by the next import too.
    fs::remove_all(tmp.file("c"));
    fs::copy(tmp.file("old"), tmp.file("c.replaced-" + dead), fs::copy_options::recursive);
    fs::copy(tmp.file("new"), tmp.file("c.importing-" + dead), fs::copy_options::recursive);
    const auto r = run_cli(import_cmd(tmp.file("a.jsonl"), tmp.file("c")));
    EXPECT_EQ(r.exit_code, 2) << "the repaired corpus exists, and no --overwrite was given";
    EXPECT_NE(r.err.find("completed an interrupted 'corpus import --overwrite'"), std::string::npos) << r.err;
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).size(), 5u);
    EXPECT_FALSE(fs::exists(tmp.file("c.replaced-" + dead)));
}

// An import's leftovers are judged by the lock the import holds on its DIR.importing-PID, not by
// whether a process has that PID (issue 48): after a restart a container's import runs as the
// same PID again, and an unlocked folder under a PID in use was never repaired. Here the PID is
// this test's own, alive throughout.
TEST(CorpusIntegrity, ImportLeftoversUnderAPidInUseAreJudgedByTheirLock) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("a.jsonl"), records(4, "a"));
    novelty::test::write_file(tmp.file("b.jsonl"), records(5, "b"));
    ASSERT_EQ(run_cli(import_cmd(tmp.file("a.jsonl"), tmp.file("old"))).exit_code, 0);
    ASSERT_EQ(run_cli(import_cmd(tmp.file("b.jsonl"), tmp.file("new"))).exit_code, 0);
    const std::string live = std::to_string(::getpid());
    const auto leave_leftovers = [&] {
        fs::copy(tmp.file("old"), tmp.file("c.replaced-" + live), fs::copy_options::recursive);
        fs::copy(tmp.file("new"), tmp.file("c.importing-" + live), fs::copy_options::recursive);
    };
    // Killed between the renames, the new corpus complete: completed although the PID is in use.
    leave_leftovers();
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).size(), 5u);
    EXPECT_FALSE(fs::exists(tmp.file("c.replaced-" + live)));
    EXPECT_FALSE(fs::exists(tmp.file("c.importing-" + live)));
    // A live import's folders (its DIR.importing-PID locked) are left alone, the old corpus too,
    // even with DIR missing; once the lock is gone they are repaired.
    fs::remove_all(tmp.file("c"));
    leave_leftovers();
    {
        const novelty::WorkFolderLock held(tmp.file("c.importing-" + live));
        EXPECT_THROW(novelty::Corpus::open(tmp.file("c")), novelty::CorpusError);
        EXPECT_TRUE(fs::exists(tmp.file("c.replaced-" + live)));
        EXPECT_TRUE(fs::exists(tmp.file("c.importing-" + live)));
    }
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).size(), 5u);
    EXPECT_FALSE(fs::exists(tmp.file("c.replaced-" + live)));
    // Killed after the new corpus was in place: the old one is removed, its DIR.importing-PID gone.
    fs::copy(tmp.file("old"), tmp.file("c.replaced-" + live), fs::copy_options::recursive);
    EXPECT_EQ(novelty::Corpus::open(tmp.file("c")).size(), 5u);
    EXPECT_FALSE(fs::exists(tmp.file("c.replaced-" + live)));
}
