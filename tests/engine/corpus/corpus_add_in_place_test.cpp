// corpus add in place (add_in_place.hpp): papers.sqlite updated inside one transaction under
// the corpus's exclusive lock, the copy path when the corpus is open elsewhere, and recovery of
// a transaction that a kill left in the file (SQLite's hot journal) and of one that committed.
// The CLI kill test (tests/cli/kill_test.cpp) kills the add at each of its steps.
#include "corpus/add_in_place.hpp"
#include "corpus/corpus_lock.hpp"
#include "corpus/corpus_recovery.hpp"
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_add.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <thread>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace novelty;
using novelty::test::TempDir;
namespace fs = std::filesystem;

namespace {

// `n` jsonl papers from id `first`, dated 2000 + i (appended after every earlier call's).
std::string papers(int first, int n) {
    std::string out;
    for (int i = 0; i < n; ++i)
        out += nlohmann::json{{"id", "p" + std::to_string(first + i)}, {"title", "Paper " + std::to_string(first + i)},
                              {"abstract", "About " + std::to_string(first + i)}, {"year", 2000 + first + i}}.dump() + "\n";
    return out;
}

std::string make_corpus(const TempDir& tmp) {
    test::write_file(tmp.file("a.jsonl"), papers(0, 20));
    ImportOptions o;
    o.sources.push_back({tmp.file("a.jsonl"), ImportFormat::jsonl, ""});
    o.out_dir = tmp.file("c");
    import_corpus(o);
    return tmp.file("c");
}

AddPapersOptions add_of(const std::string& file) {
    AddPapersOptions options;
    options.sources.push_back({file, ImportFormat::jsonl, ""});
    return options;
}

// No work folder or intent record of an add (c.adding-PID, c.tmp-...) is left beside the corpus c.
void expect_nothing_beside_the_corpus(const TempDir& tmp) {
    for (const auto& entry : fs::directory_iterator(tmp.path()))
        EXPECT_EQ(entry.path().filename().string().find("c."), std::string::npos) << "left behind: " << entry.path();
}

ino_t inode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
    return st.st_ino;
}

// In a child process: opens papers.sqlite, writes `junk_rows` rows of 1 KiB and the generation
// `token` in one transaction with a tiny page cache (so that SQLite spills pages into the file
// before the commit), commits when asked, records the intent of an add, and dies by SIGKILL.
// The work folder is named with `folder_pid`, or the child's own PID when 0.
void killed_writer(const std::string& dir, const std::string& token, bool commit, pid_t folder_pid = 0) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        const fs::path work = dir + ".adding-" + std::to_string(folder_pid ? folder_pid : ::getpid());
        fs::create_directories(work);
        CorpusManifest pending = read_manifest(dir);  // the add's pending manifest names its generation
        pending.papers_generation = token;
        write_manifest(work.string(), pending);
        test::write_file((work / "add.json").string(),
                         nlohmann::json{{"generation", token}, {"caches", nlohmann::json::array()}, {"vectors", false}}.dump());
        SqliteDb db(dir + "/papers.sqlite", SqliteDb::Mode::read_write);
        db.exec("PRAGMA journal_mode = DELETE; PRAGMA cache_size = 10; BEGIN IMMEDIATE;"
                "CREATE TABLE junk (x BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
                "INSERT INTO junk SELECT randomblob(1024) FROM n;");
        import_detail::write_generation(db, token);
        if (commit) db.exec("COMMIT");
        ::raise(SIGKILL);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
}

}  // namespace

TEST(CorpusAddInPlace, UpdatesPapersSqliteInPlaceAndRecordsTheGeneration) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const ino_t before = inode_of(dir + "/papers.sqlite");
    test::write_file(tmp.file("b.jsonl"), papers(20, 5));
    const AddPapersSummary s = add_papers(dir, add_of(tmp.file("b.jsonl")));
    EXPECT_EQ(s.n_added, 5u);
    EXPECT_EQ(inode_of(dir + "/papers.sqlite"), before) << "papers.sqlite was replaced, not updated in place";
    const Corpus corpus = Corpus::open(dir);
    EXPECT_EQ(corpus.size(), 25u);
    EXPECT_EQ(corpus.manifest().papers_generation.size(), 32u);
    EXPECT_EQ(sha256_file(dir + "/papers.sqlite"), corpus.manifest().papers_sha256);
    expect_nothing_beside_the_corpus(tmp);
}

TEST(CorpusAddInPlace, ACorpusOpenElsewhereIsAddedToThroughACopyAndItsReaderKeepsItsView) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const ino_t before = inode_of(dir + "/papers.sqlite");
    test::write_file(tmp.file("b.jsonl"), papers(20, 5));
    {
        const Corpus reader = Corpus::open(dir);
        add_papers(dir, add_of(tmp.file("b.jsonl")));
        EXPECT_EQ(reader.size(), 20u);
        EXPECT_EQ(reader.id_and_title(19).first, "p19");
        EXPECT_EQ(reader.labels({0, 19}).ids.size(), 2u);
    }
    EXPECT_NE(inode_of(dir + "/papers.sqlite"), before);
    const Corpus corpus = Corpus::open(dir);
    EXPECT_EQ(corpus.size(), 25u);
    EXPECT_EQ(corpus.id_and_title(24).first, "p24");
}

// Two adds at once to a corpus that a reader holds open both go through copies; they run one
// after the other (the folder's add lock), so the second builds on the first and no paper is lost.
TEST(CorpusAddInPlace, TwoAddsThroughCopiesAtOnceLoseNoPaper) {
    for (int round = 0; round < 3; ++round) {
        TempDir tmp;
        const std::string dir = make_corpus(tmp);
        test::write_file(tmp.file("b.jsonl"), papers(20, 5));
        test::write_file(tmp.file("d.jsonl"), papers(25, 5));
        {
            const Corpus reader = Corpus::open(dir);
            std::string errors[2];
            const auto add = [&](const std::string& file, std::string& error) {
                try {
                    add_papers(dir, add_of(file));
                } catch (const std::exception& e) {
                    error = e.what();
                }
            };
            std::thread first(add, tmp.file("b.jsonl"), std::ref(errors[0]));
            std::thread second(add, tmp.file("d.jsonl"), std::ref(errors[1]));
            first.join();
            second.join();
            EXPECT_EQ(errors[0] + errors[1], "") << "round " << round;
            EXPECT_EQ(reader.size(), 20u);
        }
        const Corpus corpus = Corpus::open(dir);
        EXPECT_EQ(corpus.size(), 30u) << "round " << round;
        EXPECT_TRUE(corpus.find_row("p22").has_value() && corpus.find_row("p27").has_value()) << "round " << round;
    }
}

// An add and an import --overwrite of the same corpus at once run one after the other: the
// result is the import's papers, with the add's on top when the add came second; never an error.
TEST(CorpusAddInPlace, AnAddAndAnOverwritingImportAtOnceRunOneAfterTheOther) {
    for (int round = 0; round < 3; ++round) {
        TempDir tmp;
        const std::string dir = make_corpus(tmp);
        test::write_file(tmp.file("b.jsonl"), papers(20, 5));
        test::write_file(tmp.file("new.jsonl"), papers(100, 10));
        std::string errors[2];
        std::thread add([&] {
            try {
                add_papers(dir, add_of(tmp.file("b.jsonl")));
            } catch (const std::exception& e) {
                errors[0] = e.what();
            }
        });
        std::thread replace([&] {
            ImportOptions o;
            o.sources.push_back({tmp.file("new.jsonl"), ImportFormat::jsonl, ""});
            o.out_dir = dir;
            o.overwrite = true;
            try {
                import_corpus(o);
            } catch (const std::exception& e) {
                errors[1] = e.what();
            }
        });
        add.join();
        replace.join();
        EXPECT_EQ(errors[0] + errors[1], "") << "round " << round;
        const Corpus corpus = Corpus::open(dir);
        EXPECT_TRUE(corpus.find_row("p100").has_value()) << "round " << round;
        EXPECT_TRUE(corpus.size() == 10u || corpus.size() == 15u) << corpus.size() << ", round " << round;
        EXPECT_EQ(corpus.find_row("p22").has_value(), corpus.size() == 15u) << "round " << round;
    }
}

// add-vectors (and corpus embed, which attaches through it) waits for an add to a corpus of the
// same folder: it would otherwise replace vectors.npy and the manifest under the running add.
TEST(CorpusAddInPlace, AddVectorsWaitsForAnAddInTheSameFolder) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const std::vector<float> v = test::random_unit_rows(20, 4, 3);
    write_npy(tmp.file("v.npy"), DType::f32, 20, 4, v.data());
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // an add running in another process: the folder's lock, then done
        FolderWriterLock add(fs::path(dir).parent_path());
        const char byte = 1;
        if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
        ::usleep(300 * 1000);
        test::write_file(tmp.file("add-finished"), "");
        ::_exit(0);
    }
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    AddVectorsOptions options;
    options.vectors_path = tmp.file("v.npy");
    add_vectors(dir, options);
    EXPECT_TRUE(fs::exists(tmp.file("add-finished"))) << "add-vectors ran while the add held the folder";
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_EQ(Corpus::open(dir).manifest().dim, 4u);
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST(CorpusAddInPlace, TheExclusiveLockExcludesReadersButNotTheAddsOwnOpens) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const fs::path path = corpus_dir_path(dir);
    CorpusLock add(path);
    ASSERT_TRUE(add.try_exclusive());
    CorpusLock other(path);
    EXPECT_FALSE(other.try_exclusive());
    EXPECT_NO_THROW(Corpus::open(dir));  // this process holds it: no wait for itself
    add.unlock();
    {
        const Corpus reader = Corpus::open(dir);
        EXPECT_FALSE(other.try_exclusive()) << "a reader's shared lock must keep an in-place add out";
    }
    EXPECT_TRUE(other.try_exclusive());
}

TEST(CorpusAddInPlace, AKillBeforeTheCommitIsRolledBackEvenWhenPagesReachedTheFile) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const std::string sha = sha256_file(dir + "/papers.sqlite");
    killed_writer(dir, "feedfeedfeedfeedfeedfeedfeedfeed", false);
    ASSERT_TRUE(fs::exists(dir + "/papers.sqlite-journal")) << "no hot journal: the test did not reach the file";
    ASSERT_NE(sha256_file(dir + "/papers.sqlite"), sha) << "no page was spilled into the file";
    const Corpus corpus = Corpus::open(dir);  // recovers first
    EXPECT_EQ(sha256_file(dir + "/papers.sqlite"), sha);
    EXPECT_EQ(corpus.manifest().papers_generation, "");
    EXPECT_EQ(corpus.size(), 20u);
    EXPECT_FALSE(fs::exists(dir + "/papers.sqlite-journal"));
    expect_nothing_beside_the_corpus(tmp);
}

TEST(CorpusAddInPlace, AKillAfterTheCommitIsRolledForward) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    killed_writer(dir, "beefbeefbeefbeefbeefbeefbeefbeef", true);
    const Corpus corpus = Corpus::open(dir);
    EXPECT_EQ(corpus.manifest().papers_generation, "beefbeefbeefbeefbeefbeefbeefbeef");
    EXPECT_EQ(sha256_file(dir + "/papers.sqlite"), corpus.manifest().papers_sha256);
    expect_nothing_beside_the_corpus(tmp);
}

TEST(CorpusAddInPlace, PapersOfAnotherGenerationThanTheManifestAreRefused) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    {
        SqliteDb db(dir + "/papers.sqlite", SqliteDb::Mode::read_write);
        db.exec("BEGIN");
        import_detail::write_generation(db, "0123456789abcdef0123456789abcdef");
        db.exec("COMMIT");
    }
    // The manifest describes the file (checksums) but not its generation: only that check is left.
    CorpusManifest m = read_manifest(dir);
    m.papers_sha256 = sha256_file(dir + "/papers.sqlite");
    m.papers_fingerprint = file_fingerprint(dir + "/papers.sqlite");
    write_manifest(dir, m);
    try {
        Corpus::open(dir);
        FAIL() << "opened";
    } catch (const CorpusError& e) {
        EXPECT_NE(std::string(e.what()).find("another generation"), std::string::npos) << e.what();
    }
}

// The work folder of a killed add whose PID is in use again (an add running as PID 1 in a
// container, killed after its commit, and every later command PID 1 too) is recovered: an add is
// dead when its work folder's lock is free, whatever process has the PID now.
TEST(CorpusAddInPlace, AKilledAddWhosePidIsInUseAgainIsRecoveredByItsLock) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    killed_writer(dir, "cafecafecafecafecafecafecafecafe", true, ::getpid());  // (this process: alive)
    ASSERT_TRUE(fs::exists(dir + ".adding-" + std::to_string(::getpid())));
    const Corpus corpus = Corpus::open(dir);
    EXPECT_EQ(corpus.manifest().papers_generation, "cafecafecafecafecafecafecafecafe");
    EXPECT_EQ(sha256_file(dir + "/papers.sqlite"), corpus.manifest().papers_sha256);
    expect_nothing_beside_the_corpus(tmp);
}

// A work folder whose lock is held belongs to a live add, whatever its name says; once the lock
// is released (the add's process died) it is an interrupted add.
TEST(CorpusAddInPlace, AWorkFolderIsAliveWhileItsLockIsHeld) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    const fs::path path = corpus_dir_path(dir);
    const fs::path work = dir + ".adding-999999999";  // (no such process)
    fs::create_directories(work);
    {
        const WorkFolderLock held(work);
        EXPECT_FALSE(has_interrupted_add(path)) << "a locked work folder was taken for dead";
        EXPECT_FALSE(work_folder_abandoned(work, 999999999));
    }
    EXPECT_TRUE(has_interrupted_add(path));
    EXPECT_TRUE(work_folder_abandoned(work, ::getpid()));
}

// A corpus reached through a symbolic link in another folder: two adds at once, one through the
// real path and one through the link, while a reader holds the real path (so both go through
// copies), land in the one corpus, and the link stays a link to it.
TEST(CorpusAddInPlace, AddsThroughASymbolicLinkUpdateTheCorpusItNames) {
    for (int round = 0; round < 2; ++round) {
        TempDir tmp;
        const std::string dir = make_corpus(tmp);
        fs::create_directories(tmp.file("links"));
        const std::string link = tmp.file("links/c");
        fs::create_directory_symlink(dir, link);
        test::write_file(tmp.file("b.jsonl"), papers(20, 5));
        test::write_file(tmp.file("d.jsonl"), papers(25, 5));
        {
            const Corpus reader = Corpus::open(dir);
            std::string errors[2];
            const auto add = [&](const std::string& target, const std::string& file, std::string& error) {
                try {
                    add_papers(target, add_of(file));
                } catch (const std::exception& e) {
                    error = e.what();
                }
            };
            std::thread real(add, dir, tmp.file("b.jsonl"), std::ref(errors[0]));
            std::thread linked(add, link, tmp.file("d.jsonl"), std::ref(errors[1]));
            real.join();
            linked.join();
            EXPECT_EQ(errors[0] + errors[1], "") << "round " << round;
        }
        EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced, round " << round;
        const Corpus corpus = Corpus::open(dir);
        EXPECT_EQ(corpus.size(), 30u) << "round " << round;
        EXPECT_TRUE(corpus.find_row("p22").has_value() && corpus.find_row("p27").has_value()) << "round " << round;
        EXPECT_EQ(Corpus::open(link).size(), 30u) << "round " << round;
        expect_nothing_beside_the_corpus(tmp);
        for (const auto& entry : fs::directory_iterator(tmp.file("links")))
            EXPECT_EQ(entry.path().filename().string(), "c") << "left behind: " << entry.path();
    }
}

// import --overwrite through a link replaces the corpus the link names, not the link.
TEST(CorpusAddInPlace, AnOverwritingImportThroughASymbolicLinkReplacesTheCorpusItNames) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    fs::create_directories(tmp.file("links"));
    const std::string link = tmp.file("links/c");
    fs::create_directory_symlink(dir, link);
    test::write_file(tmp.file("new.jsonl"), papers(100, 10));
    ImportOptions o;
    o.sources.push_back({tmp.file("new.jsonl"), ImportFormat::jsonl, ""});
    o.out_dir = link;
    o.overwrite = true;
    import_corpus(o);
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(Corpus::open(dir).size(), 10u);
    EXPECT_TRUE(Corpus::open(dir).find_row("p100").has_value());
}

// A reader whose corpus an add through a copy replaced keeps reading its own files while the
// new corpus at the same path is being updated in place (a transaction open on it, its journal
// beside it): the reader never takes that journal for its own ("attempt to write a readonly
// database" before), and still sees the corpus it opened.
TEST(CorpusAddInPlace, AReaderOfAReplacedCorpusKeepsReadingWhileTheNewOneIsWritten) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp);
    test::write_file(tmp.file("b.jsonl"), papers(20, 5));
    const Corpus reader = Corpus::open(dir);
    add_papers(dir, add_of(tmp.file("b.jsonl")));  // through a copy: `dir` is another directory now
    // (a tiny page cache, so that the writer spills pages: its journal is then synced, with a
    // header that marks it live, as during a commit)
    SqliteDb writer(dir + "/papers.sqlite", SqliteDb::Mode::read_write);
    writer.exec("PRAGMA journal_mode = DELETE; PRAGMA cache_size = 10; BEGIN IMMEDIATE; CREATE TABLE junk (x BLOB); "
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
                "INSERT INTO junk SELECT randomblob(1024) FROM n;");
    ASSERT_TRUE(fs::exists(dir + "/papers.sqlite-journal"));
    EXPECT_EQ(reader.paper(3).id, "p3");
    EXPECT_EQ(reader.size(), 20u);
    EXPECT_EQ(reader.find_row("p19"), std::optional<std::size_t>(19));
    EXPECT_FALSE(reader.find_row("p22").has_value());
    writer.exec("ROLLBACK");
    EXPECT_EQ(Corpus::open(dir).size(), 25u);
}

// Readers open papers.sqlite through an SQLite URI (immutable): a folder name with the characters
// a URI gives a meaning opens as any other.
TEST(CorpusAddInPlace, ACorpusInAFolderNamedWithUriCharactersOpens) {
    TempDir tmp;
    test::write_file(tmp.file("a.jsonl"), papers(0, 3));
    ImportOptions o;
    o.sources.push_back({tmp.file("a.jsonl"), ImportFormat::jsonl, ""});
    o.out_dir = tmp.file("odd ?x=1#%41 name");
    import_corpus(o);
    const Corpus corpus = Corpus::open(o.out_dir);
    EXPECT_EQ(corpus.size(), 3u);
    EXPECT_EQ(corpus.paper(2).id, "p2");
}
