// The citation graph kept in papers.sqlite (corpus/citations): filled by an import of each format
// whose records carry references and by the Semantic Scholar citations dataset, kept current by
// `corpus add` (late-arriving cited papers, revisions, rebuilds), read from corpora that keep
// none, and bad citations lines refused with their file and line.
#include "corpus/citations/citation_graph.hpp"
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_add.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace novelty;
using novelty::test::TempDir;
using novelty::test::write_file;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string s2_paper(int corpusid, const std::string& title, int year, const json& refs = json::array(),
                     const std::string& doi = "") {
    json ids = {{"CorpusId", std::to_string(corpusid)}};
    if (!doi.empty()) ids["DOI"] = doi;
    return json{{"corpusid", corpusid}, {"title", title}, {"year", year}, {"externalids", ids}, {"references", refs}}.dump() + "\n";
}

ImportOptions options_of(ImportFormat format, const std::vector<std::string>& files, const std::string& out) {
    ImportOptions o;
    for (const auto& f : files) o.sources.push_back({f, format, ""});
    o.out_dir = out;
    return o;
}

AddPapersOptions add_of(const std::vector<std::string>& files) {
    AddPapersOptions o;
    for (const auto& f : files) o.sources.push_back({f, ImportFormat::s2, ""});
    return o;
}

std::size_t row_of(const std::string& dir, const std::string& id) { return *Corpus::open(dir).find_row(id); }

/// The references of paper `id`: corpus paper ids, or "KIND:ID" for works outside the corpus.
std::vector<std::string> references(const std::string& dir, const std::string& id, const std::string& format) {
    const Corpus c = Corpus::open(dir);
    CitationGraph graph(dir, format);
    std::vector<std::string> out;
    for (const CitationEdge& e : graph.references(*c.find_row(id)))
        out.push_back(e.row ? c.paper(*e.row).id : e.id_kind + ":" + e.id);
    return out;
}

std::vector<std::string> citing(const std::string& dir, const std::string& id, const std::string& format) {
    const Corpus c = Corpus::open(dir);
    CitationGraph graph(dir, format);
    std::vector<std::string> out;
    for (const CitationEdge& e : graph.citations(*c.find_row(id))) out.push_back(c.paper(*e.row).id);
    return out;
}

using Ids = std::vector<std::string>;

}  // namespace

TEST(CitationGraph, AnImportOfEachFormatWithReferencesFillsIt) {
    TempDir tmp;
    write_file(tmp.file("s2.jsonl"), s2_paper(1, "Origins", 2001) + s2_paper(2, "Sequel", 2005, {1, "DOI:10.9/out"}) +
                                         s2_paper(3, "Third", 2007, {json{{"corpusId", 2}}, 1}));
    import_corpus(options_of(ImportFormat::s2, {tmp.file("s2.jsonl")}, tmp.file("s2")));
    EXPECT_EQ(references(tmp.file("s2"), "2", "s2"), (Ids{"1", "DOI:10.9/out"}));
    EXPECT_EQ(citing(tmp.file("s2"), "1", "s2"), (Ids{"2", "3"}));

    write_file(tmp.file("oa.jsonl"),
               json{{"id", "https://openalex.org/W1"}, {"title", "First work"}, {"publication_year", 2010}}.dump() + "\n" +
                   json{{"id", "https://openalex.org/W2"}, {"title", "Second work"}, {"publication_year", 2012},
                        {"referenced_works", {"https://openalex.org/W1", "https://openalex.org/W77"}}}.dump() + "\n");
    import_corpus(options_of(ImportFormat::openalex, {tmp.file("oa.jsonl")}, tmp.file("oa")));
    EXPECT_EQ(references(tmp.file("oa"), "W2", "openalex"), (Ids{"W1", "OpenAlex:W77"}));
    EXPECT_EQ(citing(tmp.file("oa"), "W1", "openalex"), (Ids{"W2"}));

    write_file(tmp.file("j.jsonl"), json{{"id", "a"}, {"title", "Alpha"}, {"doi", "10.5/a"}, {"year", 2000}}.dump() + "\n" +
                                        json{{"id", "b"}, {"title", "Beta"}, {"year", 2003}, {"references", {"DOI:10.5/A"}}}.dump() + "\n");
    import_corpus(options_of(ImportFormat::jsonl, {tmp.file("j.jsonl")}, tmp.file("j")));
    EXPECT_EQ(references(tmp.file("j"), "b", "jsonl"), (Ids{"a"}));

    const auto article = [](int pmid, int year, const std::string& refs) {
        return "<PubmedArticle><MedlineCitation><PMID>" + std::to_string(pmid) +
               "</PMID><Article><Journal><JournalIssue><PubDate><Year>" + std::to_string(year) +
               "</Year></PubDate></JournalIssue><Title>J</Title></Journal><ArticleTitle>Article " + std::to_string(pmid) +
               "</ArticleTitle></Article></MedlineCitation><PubmedData><ReferenceList>" + refs +
               "</ReferenceList></PubmedData></PubmedArticle>\n";
    };
    const auto ref = [](const std::string& type, const std::string& id) {
        return "<Reference><Citation>r</Citation><ArticleIdList><ArticleId IdType=\"" + type + "\">" + id +
               "</ArticleId></ArticleIdList></Reference>";
    };
    write_file(tmp.file("pm.xml"), "<PubmedArticleSet>\n" + article(11, 2001, "") +
                                       article(12, 2004, ref("pubmed", "11") + ref("doi", "10.1/out")) + "</PubmedArticleSet>\n");
    import_corpus(options_of(ImportFormat::pubmed, {tmp.file("pm.xml")}, tmp.file("pm")));
    EXPECT_EQ(references(tmp.file("pm"), "12", "pubmed"), (Ids{"11", "DOI:10.1/out"}));
    EXPECT_EQ(citing(tmp.file("pm"), "11", "pubmed"), (Ids{"12"}));
}

TEST(CitationGraph, TheS2CitationsDatasetFillsItWithInfluenceContextsAndIntents) {
    TempDir tmp;
    write_file(tmp.file("papers.jsonl"), s2_paper(1, "Origins", 2001) + s2_paper(2, "Sequel", 2005) + s2_paper(3, "Third", 2007));
    const auto edge = [](const json& citing, const json& cited) { return json{{"citingcorpusid", citing}, {"citedcorpusid", cited}}; };
    json influential = edge(2, 1);
    influential["isinfluential"] = true;
    influential["contexts"] = {"as shown by [1]"};
    influential["intents"] = {{"methodology"}};
    write_file(tmp.file("citations.jsonl"), influential.dump() + "\n" + edge("3", 1).dump() + "\n" + edge(3, 999).dump() + "\n" +
                                                edge(888, 1).dump() + "\n" + edge(2, nullptr).dump() + "\n" +
                                                influential.dump() + "\n");  // (an identical copy: dropped)
    const ImportSummary summary =
        import_corpus(options_of(ImportFormat::s2, {tmp.file("papers.jsonl"), tmp.file("citations.jsonl")}, tmp.file("c")));
    EXPECT_EQ(summary.n_unmatched_citations, 2u);  // 888 cites from outside; one line names no cited paper
    EXPECT_EQ(references(tmp.file("c"), "3", "s2"), (Ids{"1", "CorpusId:999"}));
    EXPECT_EQ(citing(tmp.file("c"), "1", "s2"), (Ids{"2", "3"}));  // 888 is not in the corpus: its edge is not kept
    CitationGraph graph(tmp.file("c"), "s2");
    const std::vector<CitationEdge> edges = graph.citations(row_of(tmp.file("c"), "1"));
    ASSERT_EQ(edges.size(), 2u);
    EXPECT_EQ(edges[0].influential, true);
    EXPECT_EQ(edges[0].contexts, std::optional<std::string>(R"(["as shown by [1]"])"));
    EXPECT_EQ(edges[0].intents, std::optional<std::string>(R"([["methodology"]])"));
    EXPECT_FALSE(edges[1].influential);
    EXPECT_FALSE(edges[1].contexts);
}

TEST(CitationGraph, ALateArrivingCitedPaperResolvesTheReferencesMadeToIt) {
    TempDir tmp;
    write_file(tmp.file("p0.jsonl"), s2_paper(2, "Sequel", 2005, {1, "DOI:10.1/x"}));
    import_corpus(options_of(ImportFormat::s2, {tmp.file("p0.jsonl")}, tmp.file("c")));
    EXPECT_EQ(references(tmp.file("c"), "2", "s2"), (Ids{"CorpusId:1", "DOI:10.1/x"}));
    write_file(tmp.file("p1.jsonl"), s2_paper(1, "Origins", 2001));
    add_papers(tmp.file("c"), add_of({tmp.file("p1.jsonl")}));
    EXPECT_EQ(references(tmp.file("c"), "2", "s2"), (Ids{"1", "DOI:10.1/x"}));
    EXPECT_EQ(citing(tmp.file("c"), "1", "s2"), (Ids{"2"}));
    write_file(tmp.file("p2.jsonl"), s2_paper(3, "Known by its DOI", 2009, json::array(), "10.1/X"));
    add_papers(tmp.file("c"), add_of({tmp.file("p2.jsonl")}));
    EXPECT_EQ(references(tmp.file("c"), "2", "s2"), (Ids{"1", "3"}));
    EXPECT_EQ(citing(tmp.file("c"), "3", "s2"), (Ids{"2"}));
}

TEST(CitationGraph, DatasetEdgesSurviveAddsRevisionsAndRebuilds) {
    TempDir tmp;
    write_file(tmp.file("p0.jsonl"), s2_paper(1, "Origins", 2001) + s2_paper(2, "Sequel", 2005));
    write_file(tmp.file("c0.jsonl"),
               json{{"citingcorpusid", 2}, {"citedcorpusid", 1}, {"contexts", {"see [1]"}}, {"isinfluential", false}}.dump() + "\n");
    import_corpus(options_of(ImportFormat::s2, {tmp.file("p0.jsonl"), tmp.file("c0.jsonl")}, tmp.file("c")));
    const auto contexts_of_edge = [&] {
        CitationGraph graph(tmp.file("c"), "s2");
        for (const CitationEdge& e : graph.citations(row_of(tmp.file("c"), "1")))
            if (e.row == row_of(tmp.file("c"), "2")) return e.contexts.value_or("(none)");
        return std::string("(no edge)");
    };
    // A revised record of the citing paper and a new paper citing both, added in place.
    write_file(tmp.file("p1.jsonl"), s2_paper(2, "Sequel, revised", 2005) + s2_paper(3, "Third", 2008, {1, 2}));
    EXPECT_FALSE(add_papers(tmp.file("c"), add_of({tmp.file("p1.jsonl")})).rebuilt);
    EXPECT_EQ(contexts_of_edge(), R"(["see [1]"])");
    EXPECT_EQ(citing(tmp.file("c"), "2", "s2"), (Ids{"3"}));
    // An abstract for a paper of the corpus alone makes the add rebuild papers.sqlite.
    write_file(tmp.file("a2.jsonl"), json{{"corpusid", 1}, {"abstract", "Where it began."}}.dump() + "\n" +
                                         json{{"citingcorpusid", 3}, {"citedcorpusid", 2}, {"isinfluential", true}}.dump() + "\n");
    EXPECT_TRUE(add_papers(tmp.file("c"), add_of({tmp.file("a2.jsonl")})).rebuilt);
    EXPECT_EQ(contexts_of_edge(), R"(["see [1]"])");
    CitationGraph graph(tmp.file("c"), "s2");
    const auto edges = graph.citations(row_of(tmp.file("c"), "2"));
    ASSERT_EQ(edges.size(), 1u);
    EXPECT_EQ(edges[0].influential, true);  // the record's reference, with the dataset's word on it
    EXPECT_EQ(references(tmp.file("c"), "3", "s2"), (Ids{"1", "2"}));
}

namespace {

// papers.sqlite as a corpus imported before the graph was stored had it: no citation tables
// (with `version_1`, the row-keyed layout of format version 1 too), the manifest updated.
void drop_citation_tables(const std::string& dir, bool version_1) {
    {
        SqliteDb db((fs::path(dir) / "papers.sqlite").string(), SqliteDb::Mode::read_write);
        db.exec(version_1 ? test::read_file(std::string(NOVELTY_FIXTURES_DIR) + "/version_1_layout.sql")
                          : "DROP TABLE citations; DROP TABLE citation_keys; VACUUM;");
    }
    CorpusManifest m = read_manifest(dir);
    const std::string path = (fs::path(dir) / "papers.sqlite").string();
    if (version_1) m.format_version = 1;
    m.papers_sha256 = sha256_file(path);
    m.papers_fingerprint = file_fingerprint(path);
    write_manifest(dir, m);
}

}  // namespace

TEST(CitationGraph, CorporaThatKeepNoGraphStillGiveItAndAnAddStoresIt) {
    for (const bool version_1 : {false, true}) {
        TempDir tmp;
        write_file(tmp.file("p0.jsonl"), s2_paper(1, "Origins", 2001) + s2_paper(2, "Sequel", 2005, {1, 77}));
        import_corpus(options_of(ImportFormat::s2, {tmp.file("p0.jsonl")}, tmp.file("c")));
        drop_citation_tables(tmp.file("c"), version_1);
        {
            CitationGraph graph(tmp.file("c"), "s2");
            EXPECT_FALSE(graph.stored());
            EXPECT_EQ(graph.row_of_key("corpusid:2"), row_of(tmp.file("c"), "2"));
        }
        EXPECT_EQ(references(tmp.file("c"), "2", "s2"), (Ids{"1", "CorpusId:77"}));
        EXPECT_EQ(citing(tmp.file("c"), "1", "s2"), (Ids{"2"}));
        write_file(tmp.file("p1.jsonl"), s2_paper(77, "Cited all along", 1999));
        add_papers(tmp.file("c"), add_of({tmp.file("p1.jsonl")}));
        EXPECT_TRUE(CitationGraph(tmp.file("c"), "s2").stored()) << "version 1: " << version_1;
        EXPECT_EQ(references(tmp.file("c"), "2", "s2"), (Ids{"1", "77"}));
    }
}

TEST(CitationGraph, BadCitationsLinesNameTheirFileAndLine) {
    TempDir tmp;
    write_file(tmp.file("papers.jsonl"), s2_paper(1, "Origins", 2001) + s2_paper(2, "Sequel", 2005));
    const std::string good = json{{"citingcorpusid", 2}, {"citedcorpusid", 1}}.dump() + "\n";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"citingcorpusid": "abc", "citedcorpusid": 1})", "'citingcorpusid' must be a corpus id"},
        {R"({"citingcorpusid": 2})", "missing 'citedcorpusid'"},
        {R"({"citingcorpusid": -4, "citedcorpusid": 1})", "'citingcorpusid' must be a corpus id"},
        {R"({"citingcorpusid": null, "citedcorpusid": 1})", "'citingcorpusid' is null"},
        {R"({"citingcorpusid": 2, "citedcorpusid": [1]})", "'citedcorpusid' must be a corpus id"},
        {R"({"citingcorpusid": 2, "citedcorpusid": 1, "isinfluential": "yes"})", "'isinfluential' must be true, false or null"},
        {R"({"citingcorpusid": 2, "citedcorpusid": 1, "contexts": [1]})", "'contexts' must be a list of strings"},
        {R"({"citingcorpusid": 2, "citedcorpusid": 1, "contexts": "see"})", "'contexts' must be a list of strings"},
        {R"({"citingcorpusid": 2, "citedcorpusid": 1, "intents": [[1]]})", "'intents' must be a list of intents"},
        {R"({"citingcorpusid": 2, "citedcorpusid": 1, "isinfluential": true})", "given twice, differently (first at "},
    };
    for (const auto& [line, problem] : cases) {
        const std::string path = tmp.file("citations.jsonl");
        write_file(path, good + line + "\n");
        try {
            import_corpus(options_of(ImportFormat::s2, {tmp.file("papers.jsonl"), path}, tmp.file("c")));
            ADD_FAILURE() << "accepted: " << line;
        } catch (const InputError& e) {
            EXPECT_EQ(e.file(), path) << line;
            EXPECT_EQ(e.line(), 2u) << line;
            EXPECT_NE(e.problem().find(problem), std::string::npos) << line << " -> " << e.problem();
        }
    }
}
