// The four importers on small fixtures: fields, ordering, and every kind of bad input.
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/import.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace novelty;
using novelty::test::fixture;
using novelty::test::TempDir;

namespace {

ImportOptions options_for(const std::string& fixture_name, ImportFormat format, const std::string& out) {
    ImportOptions options;
    options.sources.push_back({fixture(fixture_name), format, ""});
    options.out_dir = out;
    return options;
}

std::vector<std::string> ids_in_row_order(const Corpus& corpus) {
    std::vector<std::string> ids;
    for (std::size_t row = 0; row < corpus.size(); ++row) ids.push_back(corpus.paper(row).id);
    return ids;
}

// Runs an import expected to fail; returns the error.
InputError import_error(const ImportOptions& options) {
    try {
        import_corpus(options);
    } catch (const InputError& e) {
        return e;
    }
    throw std::runtime_error("the import did not fail");
}

}  // namespace

TEST(ImportGeneric, ReadsFieldsAndOrdersRowsByEffectiveDate) {
    TempDir tmp;
    const auto summary = import_corpus(options_for("import/generic.jsonl", ImportFormat::jsonl, tmp.file("c")));
    EXPECT_EQ(summary.n_papers, 8u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    // Effective dates: 1999-01-02, 2019-12-31, 2021-06-15 (x2, by id), 2021-06-30, 2021-12-31,
    // then the undated papers by id.
    EXPECT_EQ(ids_in_row_order(corpus),
              (std::vector<std::string>{"g-early", "42", "g-late", "g-tie", "g-month", "g-year", "a-undated", "g-undated"}));
    const Paper late = corpus.paper(2);
    EXPECT_EQ(late.row, 2u);
    EXPECT_EQ(late.title, "Sparse attention for long documents");
    EXPECT_EQ(late.abstract, "We study sparse attention patterns.");
    EXPECT_EQ(late.date, "2021-06-15");
    EXPECT_EQ(late.field, "nlp");
    EXPECT_EQ(late.venue, "ACL");
    EXPECT_EQ(late.citations, 12);
    EXPECT_EQ(nlohmann::json::parse(late.extra_json), nlohmann::json::parse(R"({"authors": ["A. One", "B. Two"]})"));
    const Paper numeric = corpus.paper(1);
    EXPECT_EQ(numeric.abstract, "An abstract given as text.");
    EXPECT_EQ(numeric.date, "2019");
    EXPECT_EQ(numeric.sort_date, "2019-12-31");
    EXPECT_EQ(numeric.year, 2019);
    EXPECT_EQ(corpus.paper(4).date, "2021-06");
    EXPECT_EQ(corpus.paper(5).citations, 7);   // cited_by_count
    EXPECT_EQ(corpus.paper(7).citations, 3);   // citation_count
    EXPECT_EQ(corpus.paper(7).date, "");
    EXPECT_FALSE(corpus.paper(7).year);
    EXPECT_EQ(corpus.paper(0).date, "1999-01-02");  // a timestamp keeps its day

    const CorpusManifest& m = corpus.manifest();
    EXPECT_EQ(m.count, 8u);
    EXPECT_EQ(m.n_dated, 6u);
    EXPECT_EQ(m.date_min, "1999-01-02");
    EXPECT_EQ(m.date_max, "2021");
    EXPECT_EQ(m.dim, 0u);
    EXPECT_FALSE(corpus.has_vectors());
    ASSERT_EQ(m.sources.size(), 1u);
    EXPECT_EQ(m.sources[0].records, 8u);
    EXPECT_EQ(m.sources[0].sha256.size(), 64u);
    EXPECT_EQ(m.papers_sha256.size(), 64u);
    ASSERT_EQ(m.fields.size(), 2u);
    EXPECT_EQ(m.fields[0].name, "ml");
    EXPECT_EQ(m.fields[0].count, 2u);
}

TEST(ImportGeneric, CutoffsArePrefixes) {
    TempDir tmp;
    import_corpus(options_for("import/generic.jsonl", ImportFormat::jsonl, tmp.file("c")));
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_EQ(corpus.rows_through(*parse_date("1998")), 0u);
    EXPECT_EQ(corpus.rows_through(*parse_date("1999-01-02")), 1u);
    EXPECT_EQ(corpus.rows_through(*parse_date("2020")), 2u);
    EXPECT_EQ(corpus.rows_through(*parse_date("2021-06-15")), 4u);
    EXPECT_EQ(corpus.rows_through(*parse_date("2021-06")), 5u);    // g-month, known to June, is in
    EXPECT_EQ(corpus.rows_through(*parse_date("2021-11-30")), 5u); // g-year could be December: out
    EXPECT_EQ(corpus.rows_through(*parse_date("2021")), 6u);
    EXPECT_EQ(corpus.rows_through(*parse_date("9999")), 6u);       // undated papers never pass a cutoff
    EXPECT_EQ(corpus.find_row("g-tie"), 3u);
    EXPECT_EQ(corpus.find_row("42"), 1u);
    EXPECT_FALSE(corpus.find_row("nope"));
}

TEST(ImportArxiv, ReadsTheSnapshotFormat) {
    TempDir tmp;
    import_corpus(options_for("import/arxiv.jsonl", ImportFormat::arxiv, tmp.file("c")));
    const Corpus corpus = Corpus::open(tmp.file("c"));
    ASSERT_EQ(corpus.size(), 3u);
    const Paper first = corpus.paper(0);
    EXPECT_EQ(first.id, "0704.0001");
    EXPECT_EQ(first.date, "2007-04-02");  // first version, not update_date
    EXPECT_EQ(first.title, "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies");
    EXPECT_EQ(first.abstract,
              "A fully differential calculation in perturbative quantum chromodynamics is presented for the production "
              "of massive photon pairs.");
    EXPECT_EQ(first.field, "hep-ph");
    EXPECT_EQ(first.venue, "Phys.Rev.D76:013009,2007");
    const auto extra = nlohmann::json::parse(first.extra_json);
    EXPECT_EQ(extra["doi"], "10.1103/PhysRevD.76.013009");
    EXPECT_EQ(extra["versions"].size(), 2u);  // kept
    EXPECT_EQ(extra["categories"], "hep-ph");
    const Paper attention = corpus.paper(1);
    EXPECT_EQ(attention.id, "1706.03762");
    EXPECT_EQ(attention.field, "cs.CL");
    EXPECT_EQ(attention.date, "2017-06-12");
    EXPECT_EQ(corpus.paper(2).date, "2021-01-05");  // update_date when there are no versions
}

TEST(ImportOpenAlex, RebuildsAbstractsAndReadsFlattenedRecords) {
    TempDir tmp;
    import_corpus(options_for("import/openalex.jsonl", ImportFormat::openalex, tmp.file("c")));
    const Corpus corpus = Corpus::open(tmp.file("c"));
    ASSERT_EQ(corpus.size(), 3u);
    const Paper flat = corpus.paper(0);
    EXPECT_EQ(flat.id, "W2125158795");
    EXPECT_EQ(flat.date, "1999-12-01");
    EXPECT_EQ(flat.venue, "European journal of endocrinology");
    EXPECT_EQ(flat.citations, 194);
    EXPECT_EQ(flat.field, "Medicine");
    EXPECT_EQ(nlohmann::json::parse(flat.extra_json)["synergy_set"], "Chou_2004");
    const Paper concepts_only = corpus.paper(1);
    EXPECT_EQ(concepts_only.id, "W1000000001");
    EXPECT_EQ(concepts_only.title, "A work with concepts only");
    EXPECT_EQ(concepts_only.abstract, "Short abstract.");
    EXPECT_EQ(concepts_only.date, "2001");
    EXPECT_EQ(concepts_only.venue, "Old Journal");
    EXPECT_EQ(concepts_only.field, "Biology");
    EXPECT_EQ(concepts_only.citations, 0);
    const Paper oa = corpus.paper(2);
    EXPECT_EQ(oa.id, "W2741809807");
    EXPECT_EQ(oa.abstract, "Despite growing interest in Open Access (OA) little is known about in practice.");
    EXPECT_EQ(oa.venue, "PeerJ");
    EXPECT_EQ(oa.field, "Social Sciences");
    EXPECT_EQ(oa.date, "2018-02-13");
}

TEST(ImportPaperlists, ReadsGzipDerivesMissingKeysAndDropsIdenticalCopies) {
    TempDir tmp;
    std::vector<std::string> notes;
    ImportOptions options = options_for("import/paperlists.jsonl.gz", ImportFormat::paperlists, tmp.file("c"));
    options.sources[0].field = "ml";
    options.on_duplicate = [&](const SkippedRecord& r) { notes.push_back(std::to_string(r.line) + " " + r.problem); };
    const auto summary = import_corpus(options);
    EXPECT_EQ(summary.n_papers, 4u);
    EXPECT_EQ(summary.n_duplicates, 1u);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("5 identical copy"), std::string::npos) << notes[0];
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_EQ(corpus.manifest().n_duplicates, 1u);
    EXPECT_EQ(corpus.manifest().sources[0].duplicates, 1u);
    EXPECT_EQ(corpus.paper(0).id, "nips1987:0001");
    EXPECT_EQ(corpus.paper(0).citations, 10);
    // The two keyless CVPR 2016 papers get distinct ids from their titles; the given id is kept.
    const Paper a = corpus.paper(1), b = corpus.paper(2);
    EXPECT_EQ(a.id.rfind("cvpr2016:t-", 0), 0u);
    EXPECT_EQ(b.id.rfind("cvpr2016:t-", 0), 0u);
    EXPECT_NE(a.id, b.id);
    EXPECT_EQ(nlohmann::json::parse(a.extra_json)["source_id"], "cvpr2016:None");
    EXPECT_FALSE(a.citations);  // gs_citation -1 means unknown
    const Paper fastgcn = corpus.paper(3);
    EXPECT_EQ(fastgcn.id, "iclr2018:rytstxWAW");
    EXPECT_EQ(fastgcn.venue, "iclr");
    EXPECT_EQ(fastgcn.field, "ml");
    EXPECT_EQ(fastgcn.citations, 1500);
    EXPECT_EQ(nlohmann::json::parse(fastgcn.extra_json)["status"], "Poster");
    // Same input twice gives the same ids (they are derived, not random).
    TempDir again;
    import_corpus(options_for("import/paperlists.jsonl.gz", ImportFormat::paperlists, again.file("c")));
    EXPECT_EQ(Corpus::open(again.file("c")).paper(1).id, a.id);
}

TEST(ImportErrors, EachBadInputNamesFileLineAndProblem) {
    struct Case {
        const char* fixture;
        std::size_t line;
        const char* phrase;
    };
    for (const Case& c : {Case{"import/malformed.jsonl", 2, "malformed JSON"},
                          Case{"import/duplicate_ids.jsonl", 3, "duplicate id 'p1' (first seen at "},
                          Case{"import/bad_date.jsonl", 2, "unparseable date '2021-02-30' in 'date'"},
                          Case{"import/non_utf8.jsonl", 2, "invalid UTF-8"},
                          Case{"import/no_text.jsonl", 1, "neither a title nor an abstract"},
                          Case{"import/not_object.jsonl", 1, "expected a JSON object"},
                          Case{"import/empty.jsonl", 0, "holds no records"}}) {
        TempDir tmp;
        const InputError e = import_error(options_for(c.fixture, ImportFormat::jsonl, tmp.file("c")));
        EXPECT_EQ(e.line(), c.line) << c.fixture << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find(c.fixture), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
        // A failed import leaves nothing behind: no corpus, no work directory.
        EXPECT_TRUE(std::filesystem::is_empty(tmp.path())) << c.fixture;
    }
}

TEST(ImportErrors, FieldTypeIdAndYearProblems) {
    struct Case {
        const char* line;
        const char* phrase;
    };
    for (const Case& c : {Case{R"({"id": "x", "title": 5, "abstract": "a"})", "'title' must be a string, found a number"},
                          Case{R"({"title": "t", "abstract": "a"})", "missing 'id'"},
                          Case{R"({"id": "", "title": "t"})", "'id' is empty"},
                          Case{R"({"id": [1], "title": "t"})", "'id' must be a string or an integer, found an array"},
                          Case{R"({"id": "x", "title": "t", "year": 2019, "date": "2018-05-01"})",
                               "year 2019 disagrees with date '2018-05-01'"},
                          Case{R"({"id": "x", "title": "t", "year": 99})", "year 99 is out of range"},
                          Case{R"({"id": "x", "title": "t", "citations": "many"})", "'citations' must be an integer"},
                          Case{R"({"id": "x", "title": "t", "date": 2020})", "'date' must be a date string"}}) {
        TempDir tmp;
        test::write_file(tmp.file("in.jsonl"), std::string("{\"id\": \"ok\", \"title\": \"fine\"}\n") + c.line + "\n");
        ImportOptions options;
        options.sources.push_back({tmp.file("in.jsonl"), ImportFormat::jsonl, ""});
        options.out_dir = tmp.file("c");
        const InputError e = import_error(options);
        EXPECT_EQ(e.line(), 2u) << c.line;
        EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
    }
}

TEST(ImportSkipInvalid, KeepsGoodRecordsAndReportsBadOnes) {
    TempDir tmp;
    ImportOptions options;
    for (const char* name : {"import/malformed.jsonl", "import/duplicate_ids.jsonl", "import/bad_date.jsonl",
                             "import/non_utf8.jsonl"})
        options.sources.push_back({fixture(name), ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    options.skip_invalid = true;
    std::vector<SkippedRecord> skipped;
    options.on_skip = [&](const SkippedRecord& r) { skipped.push_back(r); };
    const auto summary = import_corpus(options);
    EXPECT_EQ(summary.n_papers, 2u + 2u + 1u + 1u);
    ASSERT_EQ(skipped.size(), 4u);
    EXPECT_EQ(skipped[0].line, 2u);
    EXPECT_NE(skipped[1].problem.find("duplicate id"), std::string::npos);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_EQ(corpus.manifest().n_skipped, 4u);
    ASSERT_EQ(corpus.manifest().skipped.size(), 4u);
    EXPECT_EQ(corpus.manifest().skipped[2].file, fixture("import/bad_date.jsonl"));
    EXPECT_EQ(corpus.manifest().sources[1].skipped, 1u);
    EXPECT_EQ(corpus.paper(*corpus.find_row("p1")).title, "First");  // the first occurrence wins
}

TEST(ImportErrors, TruncatedGzipFailsEvenWhenSkipping) {
    TempDir tmp;
    ImportOptions options = options_for("import/truncated.jsonl.gz", ImportFormat::jsonl, tmp.file("c"));
    options.skip_invalid = true;
    const InputError e = import_error(options);
    EXPECT_NE(std::string(e.what()).find("truncated.jsonl.gz"), std::string::npos) << e.what();
    EXPECT_FALSE(std::filesystem::exists(tmp.file("c")));
}
