// The PubMed importer against hostile XML (issue 35): record bounds that a text search gets
// wrong (a blank in an end tag, a CDATA section or comment holding a record's tag, a '>' in an
// attribute), text that is not UTF-8 or names no character, and the declared encoding.
#include "corpus/import/pubmed_splitter.hpp"
#include "corpus/import/record_fields.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

using namespace novelty;
using novelty::test::TempDir;

namespace {

std::string article(const std::string& pmid, const std::string& title, const std::string& end = "</PubmedArticle>") {
    return "<PubmedArticle><MedlineCitation><PMID Version=\"1\">" + pmid +
           "</PMID><Article><Journal><JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue><Title>J</Title>"
           "</Journal><ArticleTitle>" + title + "</ArticleTitle></Article></MedlineCitation>" + end + "\n";
}

std::string set_of(const std::string& body, const std::string& declaration = "<?xml version=\"1.0\"?>") {
    return declaration + "\n<PubmedArticleSet>\n" + body + "</PubmedArticleSet>\n";
}

struct Imported {
    std::vector<std::string> titles;  ///< by id "1", "2", ... that exist
    std::size_t n_papers = 0, n_skipped = 0;
    std::vector<SkippedRecord> skips;
};

Imported import_xml(const TempDir& tmp, const std::string& xml, bool skip_invalid = false) {
    test::write_file(tmp.file("a.xml"), xml);
    ImportOptions options;
    options.sources.push_back({tmp.file("a.xml"), ImportFormat::pubmed, ""});
    options.out_dir = tmp.file("c");
    options.skip_invalid = skip_invalid;
    Imported out;
    options.on_skip = [&](const SkippedRecord& s) { out.skips.push_back(s); };
    const auto summary = import_corpus(options);
    out.n_papers = summary.n_papers;
    out.n_skipped = summary.n_skipped;
    const Corpus corpus = Corpus::open(tmp.file("c"));
    for (int i = 1; i <= 9; ++i)
        if (const auto row = corpus.find_row(std::to_string(i))) out.titles.push_back(corpus.paper(*row).title);
    return out;
}

InputError import_failure(const TempDir& tmp, const std::string& xml) {
    try {
        import_xml(tmp, xml);
    } catch (const InputError& e) {
        EXPECT_FALSE(std::filesystem::exists(tmp.file("c")));
        return e;
    }
    ADD_FAILURE() << "the import did not fail";
    return InputError("", 0, "");
}

}  // namespace

// `</PubmedArticle >` is a valid end tag; a text search for "</PubmedArticle>" ran on into the
// next record and lost it.
TEST(ImportPubmedHostile, EndTagWithABlankClosesItsRecord) {
    TempDir tmp;
    const auto r = import_xml(tmp, set_of(article("1", "A", "</PubmedArticle >") + article("2", "B") + article("3", "C")));
    EXPECT_EQ(r.n_papers, 3u);
    EXPECT_EQ(r.titles, (std::vector<std::string>{"A", "B", "C"}));
}

TEST(ImportPubmedHostile, CdataAndCommentsHoldingRecordTagsAreText) {
    TempDir tmp;
    const std::string xml = set_of("<!-- an old <PubmedArticle> was here -->\n" +
                                   article("1", "Before <![CDATA[</PubmedArticle> & <b>]]> after") +
                                   "<!--\n<PubmedArticle>\n-->\n" + article("2", "B <!-- </PubmedArticle> --> b") +
                                   "<PubmedArticle Note=\"a > b </PubmedArticle>\">" + article("3", "C").substr(15));
    const auto r = import_xml(tmp, xml);
    EXPECT_EQ(r.n_papers, 3u);
    EXPECT_EQ(r.titles, (std::vector<std::string>{"Before </PubmedArticle> & <b> after", "B b", "C"}));
}

TEST(ImportPubmedHostile, DoctypeWithAnInternalSubsetIsPassedOver) {
    TempDir tmp;
    const std::string xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE PubmedArticleSet [\n<!ELEMENT x \"<PubmedArticle>\">\n]>\n"
                            "<PubmedArticleSet>\n" + article("1", "A") + "</PubmedArticleSet>\n";
    const auto r = import_xml(tmp, xml);
    EXPECT_EQ(r.titles, (std::vector<std::string>{"A"}));
}

// Character references that name no character are refused with their line (the record is
// skipped with --skip-invalid); they were stored as bytes that are not UTF-8.
TEST(ImportPubmedHostile, ReferencesToNoCharacterAreRefusedWithTheirLine) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"&#xD800;", "UTF-16 surrogate"}, {"&#55296;", "UTF-16 surrogate"}, {"&#x110000;", "beyond U+10FFFF"},
        {"&#4294967361;", "beyond U+10FFFF"}, {"&#0;", "control character"}, {"&#x1;", "control character"}};
    for (const auto& [reference, phrase] : cases) {
        TempDir tmp;
        const InputError e = import_failure(tmp, set_of(article("1", "A") + article("2", "bad " + reference + " title")));
        EXPECT_EQ(e.file(), tmp.file("a.xml"));
        EXPECT_EQ(e.line(), 4u) << e.what();
        EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(reference), std::string::npos) << e.what();
    }
    TempDir tmp;  // in an attribute too
    const auto e = import_failure(tmp, set_of(article("1", "A") + "<PubmedArticle Note=\"&#xDFFF;\">" + article("2", "B").substr(15)));
    EXPECT_EQ(e.line(), 4u) << e.what();
    // Skipped, the other records stay; valid references are decoded.
    TempDir skip;
    const auto r = import_xml(skip, set_of(article("1", "caf&#xE9; &#x1F600;") + article("2", "&#xD800;") + article("3", "C")), true);
    EXPECT_EQ(r.n_papers, 2u);
    EXPECT_EQ(r.n_skipped, 1u);
    EXPECT_EQ(r.titles, (std::vector<std::string>{"caf\xC3\xA9 \xF0\x9F\x98\x80", "C"}));
}

TEST(ImportPubmedHostile, Latin1IsDecodedWhenDeclaredAndRefusedOtherwise) {
    TempDir tmp;
    const auto r = import_xml(tmp, set_of(article("1", "Caf\xE9 na\xEFve"), "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>"));
    EXPECT_EQ(r.titles, (std::vector<std::string>{"Caf\xC3\xA9 na\xC3\xAFve"}));
    for (const std::string& declaration : {std::string("<?xml version=\"1.0\"?>"), std::string("<?xml version='1.0' encoding='UTF-8'?>")}) {
        TempDir bad;
        const auto e = import_failure(bad, set_of(article("1", "A") + article("2", "Caf\xE9"), declaration));
        EXPECT_EQ(e.line(), 4u) << e.what();
        EXPECT_NE(std::string(e.what()).find("is not UTF-8"), std::string::npos) << e.what();
    }
    TempDir other;
    const auto e = import_failure(other, set_of(article("1", "A"), "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>"));
    EXPECT_EQ(e.line(), 1u);
    EXPECT_NE(std::string(e.what()).find("encoding 'Shift_JIS', which is not read"), std::string::npos) << e.what();
    TempDir bom;  // a UTF-8 byte-order mark before the declaration is read over
    EXPECT_EQ(import_xml(bom, "\xEF\xBB\xBF" + set_of(article("1", "A"))).titles, (std::vector<std::string>{"A"}));
}

// A record whose end tag is missing is reported at the next record's start, which is read.
TEST(ImportPubmedHostile, AMissingEndTagLosesOnlyItsRecord) {
    TempDir tmp;
    const std::string open = article("2", "B", "");
    const auto r = import_xml(tmp, set_of(article("1", "A") + open + article("3", "C")), true);
    EXPECT_EQ(r.titles, (std::vector<std::string>{"A", "C"}));
    ASSERT_EQ(r.skips.size(), 1u);
    EXPECT_EQ(r.skips[0].line, 5u);
    EXPECT_NE(r.skips[0].problem.find("its end tag is missing"), std::string::npos) << r.skips[0].problem;
}

// The splitter itself: records split at any point across lines come out whole, with their lines.
TEST(PubmedSplitter, FindsRecordsSplitAcrossLines) {
    std::vector<import_detail::PubmedSplitter::Record> records;
    import_detail::PubmedSplitter splitter("f.xml", [&](import_detail::PubmedSplitter::Record& r) { records.push_back(r); });
    const std::string text = "<PubmedArticleSet><PubmedArticle\nA='x\ny'\n><X/><!-- c\n -->\n<![CDATA[ ]\n]] ]]></PubmedArticle\n"
                             "><DeleteCitation><PMID>5</PMID></DeleteCitation\t></PubmedArticleSet>";
    std::istringstream in(text);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) splitter.feed(line, ++n);
    splitter.finish();
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].name, "PubmedArticle");
    EXPECT_EQ(records[0].line, 1u);
    EXPECT_EQ(records[0].text, "<PubmedArticle\nA='x\ny'\n><X/><!-- c\n -->\n<![CDATA[ ]\n]] ]]></PubmedArticle\n>");
    EXPECT_EQ(records[0].problem, "");
    EXPECT_EQ(records[1].name, "DeleteCitation");
    EXPECT_EQ(records[1].line, 8u);
    EXPECT_EQ(records[1].text, "<DeleteCitation><PMID>5</PMID></DeleteCitation\t>");
}

TEST(ImportStoredText, TextThatIsNotUtf8IsNeverStored) {
    Paper paper;
    paper.id = "p";
    paper.title = "ok";
    EXPECT_NO_THROW(import_detail::check_stored_text(paper, "f", 3));
    for (std::string Paper::*text : {&Paper::id, &Paper::title, &Paper::abstract, &Paper::venue, &Paper::field}) {
        Paper bad = paper;
        bad.*text = "x\xED\xA0\x80";
        try {
            import_detail::check_stored_text(bad, "f", 3);
            ADD_FAILURE() << "accepted";
        } catch (const InputError& e) {
            EXPECT_EQ(e.line(), 3u);
            EXPECT_NE(std::string(e.what()).find("is not valid UTF-8 (byte 2 of 4)"), std::string::npos) << e.what();
        }
    }
    paper.aliases.push_back("doi:\xFF");
    EXPECT_THROW(import_detail::check_stored_text(paper, "f", 3), InputError);
}
