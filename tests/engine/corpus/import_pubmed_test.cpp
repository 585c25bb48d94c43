// The PubMed importer on a baseline and an update file written for this project
// (tests/fixtures/import/pubmed): kept fields, revisions and deletions in file order, bad input.
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace novelty;
using novelty::test::fixture;
using novelty::test::TempDir;

namespace {

const char* const baseline = "import/pubmed/pubmed-baseline-0001.xml.gz";
const char* const update = "import/pubmed/pubmed-update-0002.xml";

ImportOptions pubmed_options(const std::vector<std::string>& files, const std::string& out) {
    ImportOptions options;
    for (const auto& f : files) options.sources.push_back({f, ImportFormat::pubmed, ""});
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

std::string article(const std::string& pmid, const std::string& title, const std::string& year = "2020") {
    return "<PubmedArticle><MedlineCitation><PMID Version=\"1\">" + pmid +
           "</PMID><Article><Journal><JournalIssue><PubDate><Year>" + year +
           "</Year></PubDate></JournalIssue><Title>J</Title></Journal><ArticleTitle>" + title +
           "</ArticleTitle></Article></MedlineCitation></PubmedArticle>\n";
}

std::string set_of(const std::string& body) { return "<?xml version=\"1.0\"?>\n<PubmedArticleSet>\n" + body + "</PubmedArticleSet>\n"; }

}  // namespace

TEST(ImportPubmed, ReadsTheBaselineFields) {
    TempDir tmp;
    const auto summary = import_corpus(pubmed_options({fixture(baseline)}, tmp.file("c")));
    EXPECT_EQ(summary.n_papers, 3u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    const Paper p = corpus.paper(*corpus.find_row("100"));
    EXPECT_EQ(p.title, "Statin therapy and cardiovascular events: a cohort study");  // inline <i> dropped
    EXPECT_EQ(p.abstract,
              "BACKGROUND: Statins lower <LDL> cholesterol. METHODS: We followed 1,200 adults for five years. "
              "RESULTS: Events fell by 20%.");
    EXPECT_EQ(p.venue, "The Journal of Cardiology");
    EXPECT_EQ(p.date, "2020-03-05");
    const auto extra = nlohmann::json::parse(p.extra_json);
    EXPECT_EQ(extra["mesh"], (nlohmann::json{"Humans", "Hydroxymethylglutaryl-CoA Reductase Inhibitors",
                                             "Cardiovascular Diseases"}));
    EXPECT_EQ(extra["doi"], "10.1000/jc.2020.100");
    EXPECT_EQ(corpus.find_row("doi:10.1000/JC.2020.100"), corpus.find_row("100"));
    EXPECT_EQ(corpus.find_row("pmid:100"), corpus.find_row("100"));
    EXPECT_EQ(corpus.paper(*corpus.find_row("101")).date, "1998-12");  // MedlineDate "1998 Dec-1999 Jan"
    EXPECT_EQ(corpus.paper(*corpus.find_row("101")).abstract, "");
    EXPECT_EQ(corpus.find_row("PMC5000102"), corpus.find_row("102"));
    EXPECT_EQ(corpus.find_row("10.2000/gt.102"), corpus.find_row("102"));  // the ELocationID's DOI
}

TEST(ImportPubmed, AppliesRevisionsAndDeletionsInFileOrder) {
    TempDir tmp;
    const auto summary = import_corpus(pubmed_options({fixture(baseline), fixture(update)}, tmp.file("c")));
    EXPECT_EQ(summary.n_papers, 3u);  // 100, 101 (revised), 103; 102 deleted
    EXPECT_EQ(summary.n_revised, 1u);
    EXPECT_EQ(summary.n_deleted, 1u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_FALSE(corpus.find_row("102"));
    EXPECT_FALSE(corpus.find_row("PMC5000102"));
    EXPECT_EQ(corpus.paper(*corpus.find_row("101")).abstract, "Sleep consolidates declarative memory.");
    EXPECT_EQ(corpus.find_row("10.3000/sr.101"), corpus.find_row("101"));
    EXPECT_EQ(corpus.paper(*corpus.find_row("103")).date, "2024-01");
    EXPECT_EQ(corpus.manifest().n_revised, 1u);
    EXPECT_EQ(corpus.manifest().n_deleted, 1u);
    // Rows stay in date order after the update: 1998-12, 2020-03-05, 2024-01.
    EXPECT_EQ(corpus.paper(0).id, "101");
    EXPECT_EQ(corpus.paper(2).id, "103");
}

TEST(ImportPubmedErrors, EachBadInputNamesFileLineAndLeavesNothing) {
    struct Case {
        std::string first, second;
        std::size_t line;
        const char* phrase;
        bool in_second;
    };
    const std::vector<Case> cases = {
        {set_of(article("1", "A") + "<PubmedArticle><MedlineCitation><PMID>2</PMID>\n<Article></Oops>\n</PubmedArticle>\n"), "",
         5, "malformed XML in <PubmedArticle>", false},
        {set_of(article("1", "A")), set_of("<DeleteCitation>\n<PMID Version=\"1\">77</PMID>\n</DeleteCitation>\n"), 3,
         "DeleteCitation names PMID '77', which no earlier record holds", true},
        {set_of(article("1", "A") + article("1", "A, again")), "", 4, "duplicate id '1' (first seen at ", false},
        {set_of(article("1", "")), "", 3, "neither a title nor an abstract", false},
        {set_of("<PubmedArticle><MedlineCitation><Article><ArticleTitle>T</ArticleTitle></Article></MedlineCitation></PubmedArticle>\n"),
         "", 3, "has no MedlineCitation/PMID", false},
        {set_of(article("1", "A")) + "<PubmedArticle>\n<MedlineCitation>\n", "", 5, "<PubmedArticle> is not closed", false},
    };
    for (const Case& c : cases) {
        TempDir tmp;
        test::write_file(tmp.file("a.xml"), c.first);
        std::vector<std::string> files = {tmp.file("a.xml")};
        if (!c.second.empty()) {
            test::write_file(tmp.file("b.xml"), c.second);
            files.push_back(tmp.file("b.xml"));
        }
        const InputError e = import_error(pubmed_options(files, tmp.file("c")));
        EXPECT_EQ(e.file(), tmp.file(c.in_second ? "b.xml" : "a.xml")) << e.what();
        EXPECT_EQ(e.line(), c.line) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
        EXPECT_FALSE(std::filesystem::exists(tmp.file("c"))) << c.phrase;
    }
}

TEST(ImportPubmedErrors, SkippingGoesOnAfterABadRecord) {
    TempDir tmp;
    test::write_file(tmp.file("a.xml"), set_of(article("1", "A") + "<PubmedArticle><Broken></PubmedArticle>\n" +
                                               article("2", "B") + "<DeleteCitation><PMID>9</PMID></DeleteCitation>\n"));
    ImportOptions options = pubmed_options({tmp.file("a.xml")}, tmp.file("c"));
    options.skip_invalid = true;
    const auto summary = import_corpus(options);
    EXPECT_EQ(summary.n_papers, 2u);
    EXPECT_EQ(summary.n_skipped, 2u);
}
