// Corpus directories: completeness after interrupted imports, replacing, opening checks, and
// attaching vectors.
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace novelty;
using novelty::test::TempDir;
using novelty::test::write_file;
namespace fs = std::filesystem;

namespace {

// n records "p0000".."pNNNN", years cycling 2000..2009, so row order differs from file order.
std::string make_records(std::size_t n) {
    std::string text;
    for (std::size_t i = 0; i < n; ++i) {
        char id[16];
        std::snprintf(id, sizeof id, "p%04zu", i);
        text += std::string("{\"id\": \"") + id + "\", \"title\": \"Paper " + std::to_string(i) +
                "\", \"abstract\": \"About topic " + std::to_string(i % 17) + ".\", \"year\": " +
                std::to_string(2009 - i % 10) + "}\n";
    }
    return text;
}

ImportOptions jsonl_import(const std::string& in, const std::string& out) {
    ImportOptions options;
    options.sources.push_back({in, ImportFormat::jsonl, ""});
    options.out_dir = out;
    return options;
}

std::vector<std::string> directory_names(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// Runs an import in a child process that is killed with SIGKILL at the first progress report of
// `stage`. Returns after the child is dead.
void import_killed_at(const ImportOptions& base, const std::string& stage) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ImportOptions options = base;
        options.on_progress = [&](const ImportProgress& p) {
            if (p.stage == stage) ::raise(SIGKILL);
        };
        try {
            import_corpus(options);
        } catch (...) {
        }
        ::_exit(0);  // reaching here means the stage never reported
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the import finished before stage " << stage;
    ASSERT_EQ(WTERMSIG(status), SIGKILL);
}

}  // namespace

TEST(CorpusImport, KilledPartWayLeavesNoCorpusThatOpens) {
    TempDir tmp;
    write_file(tmp.file("in.jsonl"), make_records(5000));
    for (const char* stage : {"reading", "ordering", "indexing", "finishing"}) {
        const std::string out = tmp.file(std::string("c-") + stage);
        import_killed_at(jsonl_import(tmp.file("in.jsonl"), out), stage);
        EXPECT_FALSE(fs::exists(out)) << stage;
        // The dead import's work directory is left; it is never mistaken for the corpus, and the
        // next attempt to open the corpus removes it.
        bool has_work_dir = false;
        for (const auto& name : directory_names(tmp.path()))
            if (name.rfind(std::string("c-") + stage + ".importing-", 0) == 0) has_work_dir = true;
        EXPECT_TRUE(has_work_dir) << stage;
        EXPECT_THROW(Corpus::open(out), CorpusError) << stage;
        for (const auto& name : directory_names(tmp.path()))
            EXPECT_EQ(name.find(std::string("c-") + stage + ".importing-"), std::string::npos) << name;
        EXPECT_FALSE(fs::exists(out)) << stage;
        // A new import succeeds and clears the dead one's work directory.
        import_corpus(jsonl_import(tmp.file("in.jsonl"), out));
        EXPECT_EQ(Corpus::open(out).size(), 5000u);
        for (const auto& name : directory_names(tmp.path()))
            EXPECT_EQ(name.find(std::string("c-") + stage + ".importing-"), std::string::npos) << name;
    }
}

TEST(CorpusImport, CancelledByExceptionCleansUp) {
    TempDir tmp;
    write_file(tmp.file("in.jsonl"), make_records(5000));
    ImportOptions options = jsonl_import(tmp.file("in.jsonl"), tmp.file("c"));
    options.on_progress = [](const ImportProgress& p) {
        if (p.records >= 2000) throw std::runtime_error("cancelled");
    };
    EXPECT_THROW(import_corpus(options), std::runtime_error);
    EXPECT_EQ(directory_names(tmp.path()), std::vector<std::string>{"in.jsonl"});
}

TEST(CorpusImport, RefusesToOverwriteUnlessAskedAndNeverANonCorpus) {
    TempDir tmp;
    write_file(tmp.file("in.jsonl"), make_records(10));
    import_corpus(jsonl_import(tmp.file("in.jsonl"), tmp.file("c")));
    EXPECT_THROW(import_corpus(jsonl_import(tmp.file("in.jsonl"), tmp.file("c"))), UsageError);

    write_file(tmp.file("in2.jsonl"), make_records(20));
    ImportOptions replace = jsonl_import(tmp.file("in2.jsonl"), tmp.file("c"));
    replace.overwrite = true;
    import_corpus(replace);
    EXPECT_EQ(Corpus::open(tmp.file("c")).size(), 20u);

    fs::create_directory(tmp.file("precious"));
    write_file(tmp.file("precious/notes.txt"), "keep me");
    ImportOptions wrong = jsonl_import(tmp.file("in.jsonl"), tmp.file("precious"));
    wrong.overwrite = true;
    EXPECT_THROW(import_corpus(wrong), UsageError);
    EXPECT_EQ(test::read_file(tmp.file("precious/notes.txt")), "keep me");
}

TEST(CorpusImport, RowsFollowDatesNotFileOrder) {
    TempDir tmp;
    write_file(tmp.file("in.jsonl"), make_records(30));
    import_corpus(jsonl_import(tmp.file("in.jsonl"), tmp.file("c")));
    const Corpus corpus = Corpus::open(tmp.file("c"));
    std::string previous;
    for (std::size_t row = 0; row < corpus.size(); ++row) {
        const Paper p = corpus.paper(row);
        EXPECT_EQ(p.row, row);
        const std::string key = p.sort_date + " " + p.id;
        EXPECT_LT(previous, key);
        previous = key;
    }
    EXPECT_EQ(corpus.paper(0).id, "p0009");  // year 2000, lowest id among them
}

TEST(CorpusOpen, DetectsIncompleteOrInconsistentDirectories) {
    TempDir tmp;
    EXPECT_THROW(Corpus::open(tmp.file("missing")), CorpusError);
    fs::create_directory(tmp.file("empty"));
    try {
        Corpus::open(tmp.file("empty"));
        FAIL();
    } catch (const CorpusError& e) {
        EXPECT_NE(std::string(e.what()).find("no manifest.json"), std::string::npos) << e.what();
    }
    write_file(tmp.file("in.jsonl"), make_records(10));
    import_corpus(jsonl_import(tmp.file("in.jsonl"), tmp.file("c")));
    CorpusManifest m = read_manifest(tmp.file("c"));
    m.count = 11;
    write_manifest(tmp.file("c"), m);
    EXPECT_THROW(Corpus::open(tmp.file("c")), CorpusError);
    m.count = 10;
    m.format_version = corpus_format_version + 1;
    write_manifest(tmp.file("c"), m);
    EXPECT_THROW(Corpus::open(tmp.file("c")), CorpusError);
}

class AddVectors : public ::testing::Test {
protected:
    void SetUp() override {
        write_file(tmp.file("in.jsonl"), make_records(n));
        import_corpus(jsonl_import(tmp.file("in.jsonl"), dir()));
    }
    std::string dir() const { return tmp.file("c"); }
    // Row r of the result is (r + 1) * basis(r % dim) + 0.5 * basis((r + 1) % dim).
    std::vector<float> rows(std::size_t count) const {
        std::vector<float> v(count * dim, 0.0f);
        for (std::size_t r = 0; r < count; ++r) {
            v[r * dim + r % dim] = static_cast<float>(r + 1);
            v[r * dim + (r + 1) % dim] += 0.5f;
        }
        return v;
    }
    TempDir tmp;
    const std::size_t n = 12;
    const std::size_t dim = 5;
};

TEST_F(AddVectors, NormalisesAndRecordsTheEmbedder) {
    const auto v = rows(n);
    write_npy(tmp.file("v.npy"), DType::f32, n, dim, v.data());
    fs::create_directory(tmp.file("c/cache"));
    write_file(tmp.file("c/cache/old.bin"), "stale");
    AddVectorsOptions options;
    options.vectors_path = tmp.file("v.npy");
    options.order = VectorOrder::corpus;  // row r below is corpus row r
    options.embedder = {"test-model", 0, "mean"};
    add_vectors(dir(), options);
    EXPECT_FALSE(fs::exists(tmp.file("c/cache")));  // computed from old vectors
    const Corpus corpus = Corpus::open(dir());
    ASSERT_TRUE(corpus.has_vectors());
    EXPECT_EQ(corpus.manifest().dim, dim);
    EXPECT_EQ(corpus.manifest().dtype, "f32");
    ASSERT_TRUE(corpus.manifest().embedder);
    EXPECT_EQ(corpus.manifest().embedder->name, "test-model");
    EXPECT_EQ(corpus.manifest().embedder->dim, dim);
    EXPECT_EQ(corpus.manifest().embedder->pooling, "mean");
    EXPECT_EQ(corpus.manifest().vectors_sha256.size(), 64u);
    std::vector<float> row(dim);
    for (std::size_t r = 0; r < n; ++r) {
        corpus.vectors().row_as_f32(r, row.data());
        double norm = 0;
        for (float x : row) norm += double(x) * x;
        EXPECT_NEAR(norm, 1.0, 1e-6);
        const double a = r + 1.0, b = 0.5, len = std::sqrt(a * a + b * b);
        EXPECT_NEAR(row[r % dim], a / len, 1e-6);
        EXPECT_NEAR(row[(r + 1) % dim], b / len, 1e-6);
    }
}

TEST_F(AddVectors, MatchesRowsByIdsAndConvertsToHalf) {
    // Vectors given in reverse corpus order, with an ids file saying so.
    const Corpus before = Corpus::open(dir());
    const auto v = rows(n);
    std::string ids;
    for (std::size_t i = 0; i < n; ++i) ids += before.paper(n - 1 - i).id + "\n";
    write_file(tmp.file("ids.txt"), ids);
    write_npy(tmp.file("v.npy"), DType::f32, n, dim, v.data());
    AddVectorsOptions options;
    options.vectors_path = tmp.file("v.npy");
    options.ids_path = tmp.file("ids.txt");
    options.dtype = DType::f16;
    add_vectors(dir(), options);
    const Corpus corpus = Corpus::open(dir());
    EXPECT_EQ(corpus.vectors().dtype(), DType::f16);
    std::vector<float> row(dim);
    for (std::size_t r = 0; r < n; ++r) {
        corpus.vectors().row_as_f32(r, row.data());
        const std::size_t source = n - 1 - r;
        const double a = source + 1.0, b = 0.5, len = std::sqrt(a * a + b * b);
        EXPECT_NEAR(row[source % dim], a / len, 1e-3);
    }
}

TEST_F(AddVectors, RejectsBadRowsByPaperIdAndChangesNothing) {
    auto v = rows(n);
    for (std::size_t c = 0; c < dim; ++c) v[3 * dim + c] = 0.0f;  // zero row
    v[7 * dim + 2] = std::nanf("");
    v[9 * dim + 1] = INFINITY;
    write_npy(tmp.file("v.npy"), DType::f32, n, dim, v.data());
    const Corpus corpus = Corpus::open(dir());
    AddVectorsOptions options;
    options.vectors_path = tmp.file("v.npy");
    options.order = VectorOrder::corpus;
    try {
        add_vectors(dir(), options);
        FAIL() << "bad rows accepted";
    } catch (const InputError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("3 vectors cannot be normalised"), std::string::npos) << message;
        EXPECT_NE(message.find(corpus.paper(3).id + " (vector row 3): zero vector"), std::string::npos) << message;
        EXPECT_NE(message.find(corpus.paper(7).id + " (vector row 7): contains NaN or Inf"), std::string::npos);
        EXPECT_NE(message.find(corpus.paper(9).id), std::string::npos);
    }
    EXPECT_FALSE(Corpus::open(dir()).has_vectors());
    EXPECT_EQ(directory_names(tmp.path() / "c"), (std::vector<std::string>{"manifest.json", "papers.sqlite"}));
}

TEST_F(AddVectors, RejectsCountAndIdMismatches) {
    const auto v = rows(n + 1);
    write_npy(tmp.file("v.npy"), DType::f32, n + 1, dim, v.data());
    AddVectorsOptions options;
    options.vectors_path = tmp.file("v.npy");
    EXPECT_THROW(add_vectors(dir(), options), InputError);

    write_npy(tmp.file("v12.npy"), DType::f32, n, dim, v.data());
    options.vectors_path = tmp.file("v12.npy");
    const Corpus corpus = Corpus::open(dir());
    std::string ids;
    for (std::size_t i = 0; i < n; ++i) ids += (i == 5 ? std::string("not-a-paper") : corpus.paper(i).id) + "\n";
    write_file(tmp.file("ids.txt"), ids);
    options.ids_path = tmp.file("ids.txt");
    try {
        add_vectors(dir(), options);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), 6u);
        EXPECT_NE(std::string(e.what()).find("'not-a-paper' is not a paper of the corpus"), std::string::npos);
    }
    ids.clear();
    for (std::size_t i = 0; i < n; ++i) ids += corpus.paper(i == 5 ? 4 : i).id + "\n";
    write_file(tmp.file("ids.txt"), ids);
    try {
        add_vectors(dir(), options);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), 6u);
        EXPECT_NE(std::string(e.what()).find("appears twice (first at line 5)"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(Corpus::open(dir()).has_vectors());
}

TEST_F(AddVectors, OpenDetectsVectorsThatDoNotMatchTheManifest) {
    const auto v = rows(n);
    write_npy(tmp.file("v.npy"), DType::f32, n, dim, v.data());
    AddVectorsOptions options;
    options.vectors_path = tmp.file("v.npy");
    add_vectors(dir(), options);
    write_npy(tmp.file("c/vectors.npy"), DType::f32, n - 1, dim, v.data());  // replaced by hand
    EXPECT_THROW(Corpus::open(dir()), CorpusError);
}
