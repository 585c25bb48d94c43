// add_papers writes only the new papers into a copy of papers.sqlite (keyed layout): the corpus
// after an add is the corpus a full import of the union gives, as the engine sees it (manifest
// statistics, every row's paper, input order, id and alias lookups, BM25 rankings with their
// tie order, vectors, the density cache), whether the new papers are appended, dated among the
// old ones (rows renumbered), or replace and delete old ones.
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_add.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <utility>

using namespace novelty;
using novelty::test::TempDir;

namespace {

namespace fs = std::filesystem;

struct S2Paper {
    int id;
    std::string date;  ///< "" for none (the year then dates it)
    int year;
    std::string doi;
    std::string title;
};

// Papers and SPECTER2-shaped vectors (dim 8, from `seed`) in the s2 record shapes.
void write_s2(const std::string& papers, const std::string& vectors, const std::vector<S2Paper>& list,
              std::uint32_t seed) {
    const auto v = test::random_unit_rows(list.size(), 8, seed);
    std::string p, e;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const S2Paper& x = list[i];
        nlohmann::json rec{{"corpusid", x.id}, {"title", x.title}, {"year", x.year},
                           {"venue", x.id % 3 ? "Venue " + std::to_string(x.id % 4) : ""},
                           {"citationcount", x.id % 5 ? nlohmann::json(x.id % 7) : nlohmann::json()},
                           {"externalids", {{"DOI", x.doi.empty() ? nlohmann::json() : nlohmann::json(x.doi)}}}};
        rec["publicationdate"] = x.date.empty() ? nlohmann::json() : nlohmann::json(x.date);
        p += rec.dump() + "\n";
        std::string vec = "[";
        for (std::size_t d = 0; d < 8; ++d) vec += (d ? ", " : "") + std::to_string(v[i * 8 + d]);
        e += nlohmann::json{{"corpusid", x.id}, {"model", "specter_v2"}, {"vector", vec + "]"}}.dump() + "\n";
    }
    test::write_file(papers, p);
    test::write_file(vectors, e);
}

// `n` papers from `first`, dated in the years [y0, y0 + span), with titles drawn from a few
// words (so that BM25 scores tie) and DOIs 10.9/ID.
std::vector<S2Paper> papers_from(int first, int n, int y0, int span) {
    static const char* words[] = {"graph", "protein", "sparse", "attention", "cell", "kernel"};
    std::vector<S2Paper> out;
    for (int i = 0; i < n; ++i) {
        const int id = first + i;
        const int year = y0 + (id * 7) % span;
        const std::string date = id % 4 == 0 ? "" : std::to_string(year) + "-0" + std::to_string(1 + id % 9) + "-1" +
                                                     std::to_string(id % 10);
        out.push_back({id, date, year, "10.9/" + std::to_string(id),
                       std::string(words[id % 6]) + " " + words[(id / 6) % 6] + " study"});
    }
    return out;
}

ImportOptions s2_import(const std::vector<std::string>& files, const std::string& out) {
    ImportOptions o;
    for (const auto& f : files) o.sources.push_back({f, ImportFormat::s2, ""});
    o.out_dir = out;
    return o;
}

AddPapersOptions s2_add(const std::vector<std::string>& files) {
    AddPapersOptions o;
    for (const auto& f : files) o.sources.push_back({f, ImportFormat::s2, ""});
    return o;
}

std::vector<std::pair<std::string, std::int64_t>> rows_of(const std::string& dir, const std::string& sql) {
    SqliteDb db((fs::path(dir) / "papers.sqlite").string(), SqliteDb::Mode::read_only);
    std::vector<std::pair<std::string, std::int64_t>> out;
    auto q = db.prepare(sql);
    while (q.step()) out.emplace_back(q.column_text(0), q.column_int(1));
    return out;
}

void expect_same_manifest(const CorpusManifest& a, const CorpusManifest& b) {
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.n_dated, b.n_dated);
    EXPECT_EQ(a.n_with_citations, b.n_with_citations);
    EXPECT_EQ(a.date_min, b.date_min);
    EXPECT_EQ(a.date_max, b.date_max);
    EXPECT_EQ(a.n_venues, b.n_venues);
    EXPECT_EQ(a.n_unembedded, b.n_unembedded);
    EXPECT_EQ(a.dim, b.dim);
    EXPECT_EQ(a.vectors_sha256, b.vectors_sha256);  // the same vectors, row for row
    auto same = [](const std::vector<NameCount>& x, const std::vector<NameCount>& y) {
        ASSERT_EQ(x.size(), y.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            EXPECT_EQ(x[i].name, y[i].name);
            EXPECT_EQ(x[i].count, y[i].count);
        }
    };
    same(a.fields, b.fields);
    same(a.venues, b.venues);
}

// The corpus in `got` is the corpus in `want` as far as the engine can tell.
void expect_same_corpus(const std::string& got, const std::string& want, const std::vector<std::string>& queries) {
    {  // the full-text index agrees with the records it indexes (FTS5's own check, content compared)
        SqliteDb db((fs::path(got) / "papers.sqlite").string(), SqliteDb::Mode::read_write_create);
        EXPECT_NO_THROW(db.exec("INSERT INTO papers_fts (papers_fts, rank) VALUES ('integrity-check', 1)"));
    }
    const Corpus g = Corpus::open(got);
    const Corpus w = Corpus::open(want);
    expect_same_manifest(g.manifest(), w.manifest());
    ASSERT_EQ(g.size(), w.size());
    for (std::size_t r = 0; r < g.size(); ++r) {
        const Paper a = g.paper(r), b = w.paper(r);
        ASSERT_EQ(a.id, b.id) << "row " << r;
        EXPECT_EQ(a.title, b.title);
        EXPECT_EQ(a.abstract, b.abstract);
        EXPECT_EQ(a.date, b.date);
        EXPECT_EQ(a.sort_date, b.sort_date);
        EXPECT_EQ(a.year, b.year);
        EXPECT_EQ(a.venue, b.venue);
        EXPECT_EQ(a.citations, b.citations);
        EXPECT_EQ(a.extra_json, b.extra_json);
        EXPECT_EQ(g.find_row(a.id), std::optional<std::size_t>(r));
    }
    const std::string by_row = "SELECT CAST(row AS TEXT), input_row FROM papers ORDER BY row";
    EXPECT_EQ(rows_of(got, by_row), rows_of(want, by_row));
    const auto aliases = rows_of(want, "SELECT alias, row FROM aliases ORDER BY alias");
    EXPECT_EQ(rows_of(got, "SELECT alias, row FROM aliases ORDER BY alias"), aliases);
    for (const auto& [alias, row] : aliases) EXPECT_EQ(g.find_row(alias), w.find_row(alias)) << alias;
    Bm25Index bg(got), bw(want);
    for (const auto& text : queries)
        for (const std::size_t limit : {g.size(), g.size() / 2, g.size() / 3, std::size_t{1}})
            for (const std::size_t depth : {1000, 3, 1}) {  // (a short depth reads past rows beyond the cutoff again)
                const Ranking a = bg.rank(text, limit, {}, depth), b = bw.rank(text, limit, {}, depth);
                EXPECT_EQ(a.rows, b.rows) << text;  // the same rows, ties in the same order
                EXPECT_EQ(a.scores, b.scores) << text;
            }
}

// The density cache the add left equals a full index of the reference corpus.
void expect_cache_of(const std::string& got, const std::string& want, std::size_t q, std::size_t k) {
    const Corpus g = Corpus::open(got);
    SelfJoin updated;
    ASSERT_TRUE(read_self_join(self_join_cache_path(g, g.size(), q, k), g.manifest().vectors_sha256, g.size(), q, k,
                               updated));
    const Corpus w = Corpus::open(want);
    const SelfJoin full = make_cpu_backend()->build(VectorView::of(w.vectors()))->self_join(w.size(), q, k);
    EXPECT_EQ(updated.rows, full.rows);
    EXPECT_EQ(updated.sims, full.sims);
    EXPECT_EQ(updated.density, full.density);
}

void index_cache(const std::string& dir, std::size_t q, std::size_t k) {
    const Corpus c = Corpus::open(dir);
    auto idx = make_cpu_backend()->build(VectorView::of(c.vectors()));
    cached_self_join(c, *idx, c.size(), q, k);
}

// Rewrites the corpus in `dir` into format version 1's layout (tests/fixtures/version_1_layout.sql),
// as corpora imported before the keyed layout have it.
void to_version_1_layout(const std::string& dir) {
    {
        SqliteDb db((fs::path(dir) / "papers.sqlite").string(), SqliteDb::Mode::read_write_create);
        db.exec(test::read_file(std::string(NOVELTY_FIXTURES_DIR) + "/version_1_layout.sql"));
    }
    CorpusManifest m = read_manifest(dir);
    const std::string path = (fs::path(dir) / "papers.sqlite").string();
    m.format_version = 1;
    m.papers_sha256 = sha256_file(path);
    m.papers_fingerprint = file_fingerprint(path);
    write_manifest(dir, m);
}

const std::vector<std::string> queries = {"graph", "protein study", "sparse kernel", "attention OR cell", "nothing"};

}  // namespace

TEST(CorpusAddSqlite, AppendedPapersGiveTheCorpusAFullImportGives) {
    TempDir tmp;
    auto p1 = papers_from(150, 30, 2015, 5);  // all dated after the old ones
    for (auto& p : p1) p.date = std::to_string(p.year) + "-06-01";  // (none undated: those sort last)
    write_s2(tmp.file("p1"), tmp.file("e1"), p1, 2);
    auto base = papers_from(0, 150, 1990, 20);
    for (auto& p : base) p.date = std::to_string(p.year) + "-02-02";
    write_s2(tmp.file("p0"), tmp.file("e0"), base, 1);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    index_cache(tmp.file("c"), 6, 9);
    const AddPapersSummary s = add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")}));
    EXPECT_FALSE(s.rebuilt);
    EXPECT_FALSE(s.first_renumbered_row);  // appended: no old row moved
    EXPECT_EQ(s.n_added, 30u);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0"), tmp.file("p1"), tmp.file("e1")}, tmp.file("full")));
    expect_same_corpus(tmp.file("c"), tmp.file("full"), queries);
    expect_cache_of(tmp.file("c"), tmp.file("full"), 6, 9);
    // papers.sqlite is hashed beside the vector and cache work: the recorded checksum is the
    // finished file's (what `corpus info --verify` compares).
    EXPECT_EQ(read_manifest(tmp.file("c")).papers_sha256, sha256_file(tmp.file("c") + "/papers.sqlite"));
}

TEST(CorpusAddSqlite, PapersDatedAmongTheOldOnesRenumberRowsAsAFullImportDoes) {
    TempDir tmp;
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 200, 1990, 30), 1);
    auto added = papers_from(200, 40, 1985, 40);  // among, before and after the old ones; some undated
    added[3].doi = "10.9/17";                      // an old paper's DOI: the alias now names neither
    added[5].title = "graph graph study";
    write_s2(tmp.file("p1"), tmp.file("e1"), added, 2);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    index_cache(tmp.file("c"), 5, 8);
    const AddPapersSummary s = add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")}));
    EXPECT_FALSE(s.rebuilt);
    ASSERT_TRUE(s.first_renumbered_row);
    EXPECT_EQ(s.n_papers, 240u);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0"), tmp.file("p1"), tmp.file("e1")}, tmp.file("full")));
    expect_same_corpus(tmp.file("c"), tmp.file("full"), queries);
    expect_cache_of(tmp.file("c"), tmp.file("full"), 5, 8);
    EXPECT_FALSE(Corpus::open(tmp.file("c")).find_row("doi:10.9/17"));
    // A second add onto the updated corpus (keys no longer equal rows) stays exact.
    write_s2(tmp.file("p2"), tmp.file("e2"), papers_from(240, 25, 1992, 25), 3);
    EXPECT_FALSE(add_papers(tmp.file("c"), s2_add({tmp.file("p2"), tmp.file("e2")})).rebuilt);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0"), tmp.file("p1"), tmp.file("e1"), tmp.file("p2"),
                             tmp.file("e2")},
                            tmp.file("full2")));
    expect_same_corpus(tmp.file("c"), tmp.file("full2"), queries);
    expect_cache_of(tmp.file("c"), tmp.file("full2"), 5, 8);
}

TEST(CorpusAddSqlite, ReplacedPapersLeaveTheIndexAsAFullImportWouldHaveThem) {
    TempDir tmp;
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 120, 1990, 30), 1);
    auto revised = papers_from(10, 6, 1990, 30);  // same ids, new titles, one moved in time
    for (auto& p : revised) p.title = "revised protein kernel " + std::to_string(p.id);
    revised[2].date = "2030-01-01";
    revised[2].year = 2030;
    auto with_new = revised;
    for (const auto& p : papers_from(120, 10, 1995, 10)) with_new.push_back(p);
    write_s2(tmp.file("p1"), tmp.file("e1"), with_new, 2);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    index_cache(tmp.file("c"), 4, 6);
    const AddPapersSummary s = add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")}));
    EXPECT_FALSE(s.rebuilt);
    EXPECT_EQ(s.n_removed, 6u);
    EXPECT_EQ(s.n_added, 16u);
    // The reference: the old papers without the six, then the new file (a full import refuses
    // a repeated corpusid across s2 shards, so the revisions cannot be imported as one union).
    std::vector<S2Paper> kept;
    for (const auto& p : papers_from(0, 120, 1990, 30))
        if (p.id < 10 || p.id >= 16) kept.push_back(p);
    const auto base_vectors = test::random_unit_rows(120, 8, 1);
    write_s2(tmp.file("pk"), tmp.file("ek"), kept, 1);
    {  // the kept papers' own vectors (write_s2 draws them by position)
        std::string e;
        for (const auto& p : kept) {
            std::string vec = "[";
            for (std::size_t d = 0; d < 8; ++d)
                vec += (d ? ", " : "") + std::to_string(base_vectors[static_cast<std::size_t>(p.id) * 8 + d]);
            e += nlohmann::json{{"corpusid", p.id}, {"model", "specter_v2"}, {"vector", vec + "]"}}.dump() + "\n";
        }
        test::write_file(tmp.file("ek"), e);
    }
    import_corpus(s2_import({tmp.file("pk"), tmp.file("ek"), tmp.file("p1"), tmp.file("e1")}, tmp.file("full")));
    expect_same_corpus(tmp.file("c"), tmp.file("full"), queries);
    expect_cache_of(tmp.file("c"), tmp.file("full"), 4, 6);
    EXPECT_EQ(Bm25Index(tmp.file("c")).rank("revised", 1000, {}, 100).rows.size(), 6u);
}

TEST(CorpusAddSqlite, PubmedRevisionsAndDeletionsGiveWhatImportingBothFilesGives) {
    TempDir tmp;
    const std::string baseline = test::fixture("import/pubmed/pubmed-baseline-0001.xml.gz");
    const std::string update = test::fixture("import/pubmed/pubmed-update-0002.xml");
    ImportOptions o;
    o.sources.push_back({baseline, ImportFormat::pubmed, ""});
    o.out_dir = tmp.file("c");
    import_corpus(o);
    AddPapersOptions add;
    add.sources.push_back({update, ImportFormat::pubmed, ""});
    const AddPapersSummary s = add_papers(tmp.file("c"), add);
    EXPECT_FALSE(s.rebuilt);
    o.sources.push_back({update, ImportFormat::pubmed, ""});
    o.out_dir = tmp.file("full");
    import_corpus(o);
    expect_same_corpus(tmp.file("c"), tmp.file("full"), {"memory", "sleep", "cancer OR cell", "the"});
    EXPECT_EQ(Corpus::open(tmp.file("c")).manifest().n_deleted, Corpus::open(tmp.file("full")).manifest().n_deleted);
}

TEST(CorpusAddSqlite, AbstractsForOldPapersWithoutTheirRecordsRebuildInstead) {
    TempDir tmp;
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 40, 1990, 30), 1);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    write_s2(tmp.file("p1"), tmp.file("e1"), papers_from(40, 5, 1990, 30), 2);
    test::write_file(tmp.file("a1"), R"({"corpusid": 7, "abstract": "a sparse protein abstract"})" "\n");
    const AddPapersSummary s = add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1"), tmp.file("a1")}));
    EXPECT_TRUE(s.rebuilt);  // an incremental add could not fill paper 7's abstract
    EXPECT_EQ(Corpus::open(tmp.file("c")).paper(*Corpus::open(tmp.file("c")).find_row("7")).abstract,
              "a sparse protein abstract");
}

TEST(CorpusAddSqlite, PapersLeftUnembeddedByTheImportAndEarlierAddsStayListedThroughARebuild) {
    TempDir tmp;
    // Paper 5 of the import and paper 42 of the first add come without a vector.
    const auto without = [&](const std::string& file, int id) {
        std::string kept;
        std::istringstream lines(test::read_file(file));
        for (std::string line; std::getline(lines, line);)
            if (line.rfind("{\"corpusid\":" + std::to_string(id) + ",", 0) != 0) kept += line + "\n";
        test::write_file(file, kept);
    };
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 40, 1990, 30), 1);
    without(tmp.file("e0"), 5);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    write_s2(tmp.file("p1"), tmp.file("e1"), papers_from(40, 5, 1990, 30), 2);
    without(tmp.file("e1"), 42);
    EXPECT_FALSE(add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")})).rebuilt);
    const std::string listed = "SELECT id, 0 FROM unembedded ORDER BY id";
    const std::vector<std::pair<std::string, std::int64_t>> both{{"42", 0}, {"5", 0}};
    EXPECT_EQ(rows_of(tmp.file("c"), listed), both);
    // An abstract for old paper 7 without its record: rebuilt from every paper.
    write_s2(tmp.file("p2"), tmp.file("e2"), papers_from(45, 5, 1990, 30), 3);
    test::write_file(tmp.file("a2"), R"({"corpusid": 7, "abstract": "a sparse protein abstract"})" "\n");
    EXPECT_TRUE(add_papers(tmp.file("c"), s2_add({tmp.file("p2"), tmp.file("e2"), tmp.file("a2")})).rebuilt);
    EXPECT_EQ(rows_of(tmp.file("c"), listed), both);
    EXPECT_EQ(Corpus::open(tmp.file("c")).manifest().n_unembedded, 2u);
}

TEST(CorpusAddSqlite, APaperLeftUnembeddedThatALaterAddGivesAVectorLeavesTheList) {
    TempDir tmp;
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 40, 1990, 30), 1);
    std::string kept;  // papers 5 and 6 of the import come without a vector
    std::istringstream lines(test::read_file(tmp.file("e0")));
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("{\"corpusid\":5,", 0) != 0 && line.rfind("{\"corpusid\":6,", 0) != 0) kept += line + "\n";
    test::write_file(tmp.file("e0"), kept);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    ASSERT_EQ(Corpus::open(tmp.file("c")).manifest().n_unembedded, 2u);
    // A later add gives paper 5 with its vector: it becomes a row and leaves the list; 6 stays.
    write_s2(tmp.file("p1"), tmp.file("e1"), papers_from(5, 1, 1990, 30), 1);
    EXPECT_FALSE(add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")})).rebuilt);
    const Corpus c = Corpus::open(tmp.file("c"));
    EXPECT_TRUE(c.find_row("5").has_value());
    EXPECT_EQ(rows_of(tmp.file("c"), "SELECT id, 0 FROM unembedded ORDER BY id"),
              (std::vector<std::pair<std::string, std::int64_t>>{{"6", 0}}));
    EXPECT_EQ(c.manifest().n_unembedded, 1u);
    EXPECT_EQ(c.manifest().unembedded, std::vector<std::string>{"6"});
}

TEST(CorpusAddSqlite, AFailureAfterTheS2JoinLeavesPapersSqliteByteForByte) {
    // Paper 52 comes without a vector (the s2 join lists it as unembedded in papers.sqlite), and
    // the others with vectors of another dimension, which fails the add after the join.
    TempDir tmp;
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 50, 1990, 30), 1);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    const std::string papers_before = test::read_file(tmp.file("c/papers.sqlite"));
    std::string p, e;
    for (int id = 50; id < 55; ++id) {
        p += nlohmann::json{{"corpusid", id}, {"title", "Paper " + std::to_string(id)}, {"year", 2001}}.dump() + "\n";
        if (id != 52) e += nlohmann::json{{"corpusid", id}, {"model", "specter_v2"}, {"vector", "[0.6, 0.8]"}}.dump() + "\n";
    }
    test::write_file(tmp.file("p1"), p);
    test::write_file(tmp.file("e1"), e);
    EXPECT_THROW(add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")})), UsageError);
    EXPECT_EQ(test::read_file(tmp.file("c/papers.sqlite")), papers_before);
    EXPECT_EQ(Corpus::open(tmp.file("c")).size(), 50u);
}

TEST(CorpusAddSqlite, ABadLineInTheAddedFileLeavesTheOldCorpusUntouched) {
    TempDir tmp;
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 50, 1990, 30), 1);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    index_cache(tmp.file("c"), 4, 6);
    const std::string papers_before = test::read_file(tmp.file("c/papers.sqlite"));
    const std::string manifest_before = test::read_file(tmp.file("c/manifest.json"));
    write_s2(tmp.file("p1"), tmp.file("e1"), papers_from(50, 5, 1990, 30), 2);
    test::write_file(tmp.file("p1"), test::read_file(tmp.file("p1")) + "{\"corpusid\": 99, \"title\": \n");
    try {
        add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")}));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.file(), tmp.file("p1"));
        EXPECT_EQ(e.line(), 6u) << e.what();
    }
    EXPECT_EQ(test::read_file(tmp.file("c/papers.sqlite")), papers_before);
    EXPECT_EQ(test::read_file(tmp.file("c/manifest.json")), manifest_before);
    for (const auto& entry : fs::directory_iterator(tmp.path()))
        EXPECT_EQ(entry.path().filename().string().find("c."), std::string::npos) << "left behind: " << entry.path();
    EXPECT_EQ(Corpus::open(tmp.file("c")).size(), 50u);
}

TEST(CorpusAddSqlite, ACorpusOfTheOlderLayoutIsReadAndRebuiltOnceByAnAdd) {
    TempDir tmp;
    write_s2(tmp.file("p0"), tmp.file("e0"), papers_from(0, 80, 1990, 30), 1);
    write_s2(tmp.file("p1"), tmp.file("e1"), papers_from(80, 20, 1990, 30), 2);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("c")));
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0")}, tmp.file("same")));
    to_version_1_layout(tmp.file("c"));
    expect_same_corpus(tmp.file("c"), tmp.file("same"), queries);  // read as before
    index_cache(tmp.file("c"), 4, 6);
    const AddPapersSummary s = add_papers(tmp.file("c"), s2_add({tmp.file("p1"), tmp.file("e1")}));
    EXPECT_TRUE(s.rebuilt);
    EXPECT_EQ(Corpus::open(tmp.file("c")).manifest().format_version, corpus_format_version);
    import_corpus(s2_import({tmp.file("p0"), tmp.file("e0"), tmp.file("p1"), tmp.file("e1")}, tmp.file("full")));
    expect_same_corpus(tmp.file("c"), tmp.file("full"), queries);
    expect_cache_of(tmp.file("c"), tmp.file("full"), 4, 6);
    // The next add is incremental.
    write_s2(tmp.file("p2"), tmp.file("e2"), papers_from(100, 10, 1990, 30), 3);
    EXPECT_FALSE(add_papers(tmp.file("c"), s2_add({tmp.file("p2"), tmp.file("e2")})).rebuilt);
}
