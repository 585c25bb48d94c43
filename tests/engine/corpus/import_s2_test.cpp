// The Semantic Scholar importer on fixtures in the datasets' own shapes (tests/fixtures/import/s2):
// the join on corpusid, the kept fields, aliases, SPECTER2 vectors, and each kind of bad input.
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

using namespace novelty;
using novelty::test::fixture;
using novelty::test::TempDir;

namespace {

const char* const papers0 = "import/s2/papers-part0.jsonl";
const char* const papers1 = "import/s2/papers-part1.jsonl.gz";
const char* const abstracts0 = "import/s2/abstracts-part0.jsonl";
const char* const vectors0 = "import/s2/embeddings-specter_v2-part0.jsonl";

ImportOptions s2_options(const std::vector<std::string>& files, const std::string& out) {
    ImportOptions options;
    for (const auto& f : files) options.sources.push_back({f, ImportFormat::s2, ""});
    options.out_dir = out;
    return options;
}

InputError import_error(const ImportOptions& options) {
    try {
        import_corpus(options);
    } catch (const InputError& e) {
        return e;
    }
    throw std::runtime_error("the import did not fail");
}

std::string paper_line(int corpusid, const std::string& title) {
    return nlohmann::json{{"corpusid", corpusid}, {"title", title}, {"year", 2020},
                          {"externalids", {{"DOI", nullptr}, {"CorpusId", std::to_string(corpusid)}}}}
               .dump() + "\n";
}

}  // namespace

TEST(ImportS2, JoinsPapersAndAbstractsAcrossShardsAndKeepsTheFields) {
    TempDir tmp;
    const auto summary =
        import_corpus(s2_options({fixture(papers0), fixture(papers1), fixture(abstracts0)}, tmp.file("c")));
    EXPECT_EQ(summary.n_papers, 6u);
    EXPECT_EQ(summary.n_unembedded, 0u);  // no embeddings file: nothing is left out
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_FALSE(corpus.has_vectors());
    const Paper p = corpus.paper(*corpus.find_row("1001"));
    EXPECT_EQ(p.title, "Contrastive pretraining of scientific document encoders");
    EXPECT_EQ(p.abstract, "We pretrain encoders on citation-linked pairs.");
    EXPECT_EQ(p.date, "2021-01-05");
    EXPECT_EQ(p.venue, "Neural Information Processing Systems");
    EXPECT_EQ(p.field, "Computer Science");
    EXPECT_EQ(p.citations, 12);
    const auto extra = nlohmann::json::parse(p.extra_json);
    EXPECT_EQ(extra["externalids"]["ArXiv"], "2101.00001");
    EXPECT_EQ(extra["s2fieldsofstudy"].size(), 2u);
    // No publication date: the year; no venue: the journal's name; no citation count: unknown.
    const Paper year_only = corpus.paper(*corpus.find_row("1002"));
    EXPECT_EQ(year_only.date, "2019");
    EXPECT_EQ(year_only.venue, "Journal of Microbial Ecology");
    EXPECT_EQ(corpus.paper(*corpus.find_row("1003")).citations, std::nullopt);
    // Missing abstracts: no abstracts record (1003), or a null abstract (1004): the title stays.
    EXPECT_EQ(corpus.paper(*corpus.find_row("1003")).abstract, "");
    EXPECT_EQ(corpus.paper(*corpus.find_row("1004")).abstract, "");
    // The gzip shard is read too.
    EXPECT_EQ(corpus.paper(*corpus.find_row("1005")).venue, "Transactions on Retrieval");
}

TEST(ImportS2, PapersAreFoundByEveryExternalId) {
    TempDir tmp;
    // Only the first papers shard: the abstracts of the second shard's papers are passed over.
    const auto summary = import_corpus(s2_options({fixture(papers0), fixture(abstracts0)}, tmp.file("c")));
    EXPECT_EQ(summary.n_unmatched_abstracts, 2u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    const auto row_1001 = corpus.find_row("1001");
    ASSERT_TRUE(row_1001);
    for (const char* name : {"10.1000/ABC.1", "doi:10.1000/abc.1", "https://doi.org/10.1000/abc.1", "2101.00001",
                             "arXiv:2101.00001", "corpusid:1001", "CorpusId:1001"})
        EXPECT_EQ(corpus.find_row(name), row_1001) << name;
    EXPECT_EQ(corpus.find_row("pmid:31000001"), corpus.find_row("1002"));
    EXPECT_EQ(corpus.find_row("PubMed:31000001"), corpus.find_row("1002"));
    EXPECT_FALSE(corpus.find_row("10.9999/nothing"));
    EXPECT_FALSE(corpus.find_row("31000001"));  // a bare number is a corpusid, not a PMID
}

TEST(ImportS2, AnAliasThatNamesTwoPapersNamesNeither) {
    TempDir tmp;
    test::write_file(tmp.file("p.jsonl"),
                     R"({"corpusid": 1, "title": "A", "externalids": {"DOI": "10.1/same"}})" "\n"
                     R"({"corpusid": 2, "title": "B", "externalids": {"DOI": "10.1/SAME", "ArXiv": "2001.1"}})" "\n");
    import_corpus(s2_options({tmp.file("p.jsonl")}, tmp.file("c")));
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_FALSE(corpus.find_row("10.1/same"));
    EXPECT_EQ(corpus.find_row("arxiv:2001.1"), corpus.find_row("2"));
}

TEST(ImportS2, AttachesSpecter2VectorsByCorpusidAndLeavesOutPapersWithoutOne) {
    TempDir tmp;
    const auto summary = import_corpus(
        s2_options({fixture(vectors0), fixture(papers0), fixture(papers1), fixture(abstracts0)}, tmp.file("c")));
    EXPECT_EQ(summary.n_papers, 5u);
    EXPECT_EQ(summary.n_unembedded, 1u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    ASSERT_TRUE(corpus.has_vectors());
    ASSERT_TRUE(corpus.manifest().embedder);
    EXPECT_EQ(corpus.manifest().embedder->name, "specter_v2");
    EXPECT_EQ(corpus.manifest().dim, 4u);
    EXPECT_EQ(corpus.manifest().n_unembedded, 1u);
    EXPECT_EQ(corpus.manifest().unembedded, std::vector<std::string>{"1006"});
    EXPECT_FALSE(corpus.find_row("1006"));  // not a row: no search can return it
    // Each row's vector is its paper's, normalised: 1002 was [0, 2, 0, 0], 1004 [0.5, 0.5, 0, 0].
    const auto& v = corpus.vectors();
    float row[4];
    v.row_as_f32(*corpus.find_row("1002"), row);
    EXPECT_FLOAT_EQ(row[1], 1.0f);
    v.row_as_f32(*corpus.find_row("1004"), row);
    EXPECT_NEAR(row[0], 1.0 / std::sqrt(2.0), 1e-6);
    EXPECT_NEAR(row[1], 1.0 / std::sqrt(2.0), 1e-6);
}

TEST(ImportS2Errors, EachBadInputNamesFileLineAndLeavesNothing) {
    struct Case {
        std::string papers, extra;  // a papers file, and a second file (abstracts or vectors)
        bool extra_first;
        std::size_t line;
        const char* phrase;
        bool in_extra;
    };
    const std::string good = paper_line(1, "One") + paper_line(2, "Two");
    const std::vector<Case> cases = {
        {good + "{\"corpusid\": 3, \"title\": \n", "", false, 3, "malformed JSON", false},
        {good, paper_line(2, "Two, revised"), false, 1, "duplicate id '2' (first seen at ", true},
        {good, R"({"corpusid": 9, "model": "specter_v2", "vector": "[1, 2]"})" "\n", false, 1,
         "a vector for corpusid 9, which no papers file lists", true},
        {good, R"({"corpusid": 1, "model": "specter_v2", "vector": "[1, 2]"})" "\n"
               R"({"corpusid": 2, "model": "specter_v2", "vector": "[1, 2, 3]"})" "\n", false, 2,
         "has 3 values, but the first vector", true},
        {good, R"({"corpusid": 1, "model": "specter_v2", "vector": "[1, 2]"})" "\n"
               R"({"corpusid": 2, "model": "specter_v1", "vector": "[1, 3]"})" "\n", false, 2,
         "was made by model 'specter_v1'", true},
        {good, R"({"corpusid": 1, "model": "specter_v2", "vector": "[1, x]"})" "\n", false, 1,
         "'vector': element 1 is not a number", true},
        {good, R"({"corpusid": 1, "model": "specter_v2", "vector": "[0, 0]"})" "\n"
               R"({"corpusid": 2, "model": "specter_v2", "vector": "[0, 1]"})" "\n", false, 1,
         "is a zero vector", true},
        {good, R"({"corpusid": 1, "abstract": "A."})" "\n" R"({"corpusid": 1, "abstract": "B."})" "\n", false, 2,
         "abstract of corpusid 1 given twice, differently (first at ", true},
        {R"({"corpusid": 5, "title": null, "year": 2020})" "\n", "", false, 1,
         "corpusid 5 has no title, and no abstracts file gives it an abstract", false},
    };
    for (const Case& c : cases) {
        TempDir tmp;
        test::write_file(tmp.file("papers.jsonl"), c.papers);
        std::vector<std::string> files = {tmp.file("papers.jsonl")};
        if (!c.extra.empty()) {
            test::write_file(tmp.file("extra.jsonl"), c.extra);
            files.insert(c.extra_first ? files.begin() : files.end(), tmp.file("extra.jsonl"));
        }
        const InputError e = import_error(s2_options(files, tmp.file("c")));
        EXPECT_EQ(e.file(), tmp.file(c.in_extra ? "extra.jsonl" : "papers.jsonl")) << e.what();
        EXPECT_EQ(e.line(), c.line) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
        EXPECT_FALSE(std::filesystem::exists(tmp.file("c"))) << c.phrase;  // no half-built corpus
        for (const auto& entry : std::filesystem::directory_iterator(tmp.path()))
            EXPECT_EQ(entry.path().filename().string().find(".importing-"), std::string::npos) << entry.path();
    }
}

TEST(ImportS2Errors, SkippingInvalidRecordsDropsThemAndCountsThem) {
    TempDir tmp;
    test::write_file(tmp.file("papers.jsonl"), paper_line(1, "One") + paper_line(2, "Two"));
    test::write_file(tmp.file("vectors.jsonl"), R"({"corpusid": 1, "model": "m", "vector": "[1, 0]"})" "\n"
                                                R"({"corpusid": 7, "model": "m", "vector": "[0, 1]"})" "\n");
    ImportOptions options = s2_options({tmp.file("papers.jsonl"), tmp.file("vectors.jsonl")}, tmp.file("c"));
    options.skip_invalid = true;
    std::vector<SkippedRecord> skipped;
    options.on_skip = [&](const SkippedRecord& r) { skipped.push_back(r); };
    const auto summary = import_corpus(options);
    EXPECT_EQ(summary.n_papers, 1u);      // paper 2 has no vector
    EXPECT_EQ(summary.n_unembedded, 1u);
    ASSERT_EQ(skipped.size(), 1u);        // the vector of unknown paper 7
    EXPECT_EQ(skipped[0].line, 2u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_EQ(corpus.manifest().sources[1].skipped, 1u);
    EXPECT_EQ(corpus.size(), 1u);
}

TEST(ImportS2, IdenticalCopiesAcrossShardsAreDropped) {
    TempDir tmp;
    test::write_file(tmp.file("a.jsonl"), paper_line(1, "One") + paper_line(2, "Two"));
    test::write_file(tmp.file("b.jsonl"), paper_line(2, "Two") + paper_line(3, "Three"));
    const auto summary = import_corpus(s2_options({tmp.file("a.jsonl"), tmp.file("b.jsonl")}, tmp.file("c")));
    EXPECT_EQ(summary.n_papers, 3u);
    EXPECT_EQ(summary.n_duplicates, 1u);
}
