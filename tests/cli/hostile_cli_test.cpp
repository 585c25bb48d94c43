// The CLI against hostile arguments and inputs (issue 22): negative counts, a token file that is
// a directory, whitespace-only query text, and inputs given as a process substitution; (issue 35)
// imports whose text would poison the corpus, and metadata filters that silently matched nothing.
#include "llm/json_answer.hpp"
#include "novelty/io/npy.hpp"
#include "cli_corpora.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using novelty::test::write_file;

TEST(HostileCli, NegativeCountsAreRefused) {
    TempDir tmp;
    const std::string dir = novelty::test::three_paper_corpus(tmp);
    write_file(tmp.file("q.jsonl"), "{\"id\": \"a\"}\n");
    for (const std::string& flags : {std::string("--threads -1"), std::string("--evidence -1")}) {
        const auto r = run_cli("score --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("q.jsonl")) +
                               " --p 1 --q 1 " + flags);
        EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.err;
        EXPECT_NE(r.err.find("-1"), std::string::npos) << r.err;
    }
    const auto s = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                           " --threads -1");
    EXPECT_EQ(s.exit_code, 2) << s.err;
    const auto v = run_cli("serve --corpus " + shell_quote(dir) + " --port 0 --evidence -1");
    EXPECT_EQ(v.exit_code, 2) << v.err;
}

TEST(HostileCli, TokenFileThatIsADirectoryIsNamedAsSuch) {
    TempDir tmp;
    const std::string dir = novelty::test::three_paper_corpus(tmp);
    std::filesystem::create_directories(tmp.file("tokens"));
    const auto r = run_cli("serve --corpus " + shell_quote(dir) + " --port 0 --token-file " + shell_quote(tmp.file("tokens")));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
}

// Whitespace alone is no text: such a query is not embedded (this corpus has no encoder, so
// embedding would fail differently); one whose id is a paper uses that paper's vector.
TEST(HostileCli, WhitespaceOnlyQueryTextIsNoText) {
    TempDir tmp;
    const std::string dir = novelty::test::three_paper_corpus(tmp);
    write_file(tmp.file("q.jsonl"), "{\"id\": \"zz\", \"title\": \"  \\t\", \"text\": \"\\n \"}\n");
    auto r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) + " --k 1");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("has no text"), std::string::npos) << r.err;
    write_file(tmp.file("q2.jsonl"), "{\"id\": \"b\", \"title\": \"   \"}\n");
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q2.jsonl")) + " --k 1");
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

// bash process substitution: the file is a pipe that can be read once.
TEST(HostileCli, ImportReadsAProcessSubstitution) {
    TempDir tmp;
    write_file(tmp.file("p.jsonl"), "{\"id\": \"a\", \"title\": \"A\", \"year\": 2001}\n"
                                    "{\"id\": \"b\", \"title\": \"B\", \"year\": 2002}\n");
    const std::string cli = NOVELTY_CLI_PATH;
    const std::string command = "bash -c " + shell_quote(shell_quote(cli) + " corpus import -q --in <(cat " +
                                                         shell_quote(tmp.file("p.jsonl")) + ") --out " +
                                                         shell_quote(tmp.file("c")) + " 2>&1; echo rc=$?");
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    ::pclose(pipe);
    EXPECT_NE(out.find("rc=0"), std::string::npos) << out;
    const auto info = run_cli("corpus info " + shell_quote(tmp.file("c")));
    EXPECT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE((info.out + info.err).find("2"), std::string::npos);
}

TEST(HostileLlmAnswer, DeeplyNestedAnswerIsAProblemNotACrash) {
    nlohmann::json out;
    const std::string answer = "{\"level\": 3, \"reason\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
    const auto problem = novelty::host::detail::parse_answer_object(answer, out);
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->find("nested deeper"), std::string::npos) << *problem;
    EXPECT_LT(problem->size(), 500u);
    const auto big = novelty::host::detail::parse_answer_object("{\"level\": 1e999}", out);
    ASSERT_TRUE(big.has_value());
}

// Issue 35: text that poisons a corpus, and metadata filters that silently matched nothing.
namespace {

// A PubMed file of 4 articles: PMIDs 1..4, DOIs 10.1/a..d, 4-d one-hot vectors; article 4's
// venue holds commas. `declaration` heads the file; `title2` is article 2's title as written.
std::string pubmed_corpus(const TempDir& tmp, const std::string& title2 = "Beta",
                          const std::string& declaration = "<?xml version=\"1.0\"?>") {
    const char* titles[] = {"Alpha", nullptr, "Gamma", "Delta"};
    const char* venues[] = {"J A", "J B", "J B", "Knee Surgery, Sports Traumatology, Arthroscopy"};
    std::string xml = declaration + "\n<PubmedArticleSet>\n";
    for (int i = 0; i < 4; ++i) {
        const std::string n = std::to_string(i + 1);
        xml += "<PubmedArticle><MedlineCitation><PMID>" + n + "</PMID><Article><Journal><JournalIssue><PubDate><Year>200" + n +
               "</Year></PubDate></JournalIssue><Title>" + venues[i] + "</Title></Journal><ArticleTitle>" +
               (titles[i] ? titles[i] : title2) + "</ArticleTitle><ELocationID EIdType=\"doi\">10.1/" +
               std::string(1, static_cast<char>('a' + i)) + "</ELocationID></Article></MedlineCitation></PubmedArticle>\n";
    }
    write_file(tmp.file("p.xml"), xml + "</PubmedArticleSet>\n");
    const std::string dir = tmp.file("pc");
    auto r = run_cli("corpus import -q --format pubmed --in " + shell_quote(tmp.file("p.xml")) + " --out " + shell_quote(dir));
    if (r.exit_code != 0) return "import failed: " + r.err;
    const float rows[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    novelty::write_npy(tmp.file("pv.npy"), novelty::DType::f32, 4, 4, rows);
    r = run_cli("corpus add-vectors -q " + shell_quote(dir) + " --vectors " + shell_quote(tmp.file("pv.npy")));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir;
}

// The ids of the neighbours of a search from one query (vector 1,1,1,1: every paper is as near).
struct Found {
    int exit_code = 0;
    std::string err;
    std::vector<std::string> ids;
};
Found search_ids(const TempDir& tmp, const std::string& dir, const std::string& flags, const std::string& record = "{\"id\": \"q\"}") {
    write_file(tmp.file("q.jsonl"), record + "\n");
    const float v[4] = {1, 1, 1, 1};
    novelty::write_npy(tmp.file("q.npy"), novelty::DType::f32, 1, 4, v);
    const auto r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                           " --vectors " + shell_quote(tmp.file("q.npy")) + " --k 10 --out " + shell_quote(tmp.file("s.jsonl")) +
                           " " + flags);
    Found found{r.exit_code, r.err, {}};
    if (r.exit_code != 0) return found;
    const auto line = nlohmann::json::parse(novelty::test::read_file(tmp.file("s.jsonl")));
    for (const auto& n : line["neighbors"]) found.ids.push_back(n["id"]);
    std::sort(found.ids.begin(), found.ids.end());
    return found;
}

using Ids = std::vector<std::string>;

}  // namespace

// A surrogate reference used to be stored as bytes that are not UTF-8 (exit 0), and every later
// BM25 retrieval failed with the JSON library's message; Latin-1 declared is read as Latin-1.
TEST(HostileImport, PubmedTextThatIsNotUtf8NeverReachesTheCorpus) {
    TempDir tmp;
    const std::string bad = pubmed_corpus(tmp, "Beta &#xD800; beta");
    EXPECT_NE(bad.find("import failed"), std::string::npos) << bad;
    EXPECT_NE(bad.find("p.xml:4: "), std::string::npos) << bad;
    EXPECT_NE(bad.find("UTF-16 surrogate"), std::string::npos) << bad;
    TempDir latin;
    const std::string dir = pubmed_corpus(latin, "Caf\xE9 beta", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>");
    ASSERT_EQ(dir.find("import failed"), std::string::npos) << dir;
    write_file(latin.file("bq.jsonl"), "{\"id\": \"q\", \"text\": \"caf\xC3\xA9 beta\"}\n");
    const auto r = run_cli("retrieve -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(latin.file("bq.jsonl")) +
                           " --methods bm25 --out " + shell_quote(latin.file("r.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto row = nlohmann::json::parse(novelty::test::read_file(latin.file("r.jsonl")));
    EXPECT_EQ(row["results"]["bm25"][0]["title"], "Caf\xC3\xA9 beta");
}

// A string citation count (s2) and a numeric categories (arXiv) were accepted silently: refused.
TEST(HostileImport, WrongTypesInS2AndArxivRecordsAreRefusedWithTheirLine) {
    TempDir tmp;
    write_file(tmp.file("s2.jsonl"), "{\"corpusid\": 1, \"title\": \"A\", \"year\": 2001, \"citationcount\": 5}\n"
                                     "{\"corpusid\": 2, \"title\": \"B\", \"year\": 2002, \"citationcount\": \"12\"}\n");
    auto r = run_cli("corpus import -q --format s2 --in " + shell_quote(tmp.file("s2.jsonl")) + " --out " + shell_quote(tmp.file("c1")));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("s2.jsonl:2: 'citationcount' must be a number, found a string '12'"), std::string::npos) << r.err;
    write_file(tmp.file("ax.jsonl"), "{\"id\": \"2101.1\", \"title\": \"A\", \"update_date\": \"2021-01-01\", \"categories\": 7}\n");
    r = run_cli("corpus import -q --format arxiv --in " + shell_quote(tmp.file("ax.jsonl")) + " --out " + shell_quote(tmp.file("c2")));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("ax.jsonl:1: 'categories' must be a string"), std::string::npos) << r.err;
}

TEST(HostileFilters, PapersFilesWithAByteOrderMarkOrJsonLinesMatchTheirPapers) {
    TempDir tmp;
    const std::string dir = pubmed_corpus(tmp);
    write_file(tmp.file("bom.txt"), "\xEF\xBB\xBF" "1\n2\n");
    EXPECT_EQ(search_ids(tmp, dir, "--papers " + shell_quote(tmp.file("bom.txt"))).ids, (Ids{"1", "2"}));
    write_file(tmp.file("papers.jsonl"), "{\"id\": \"1\", \"title\": \"Alpha\"}\n\n{\"id\": 3}\n");
    EXPECT_EQ(search_ids(tmp, dir, "--papers " + shell_quote(tmp.file("papers.jsonl"))).ids, (Ids{"1", "3"}));
    write_file(tmp.file("bad.jsonl"), "{\"id\": \"1\"}\n{\"title\": \"no id\"}\n");
    const auto bad = search_ids(tmp, dir, "--papers " + shell_quote(tmp.file("bad.jsonl")));
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_NE(bad.err.find("bad.jsonl:2: "), std::string::npos) << bad.err;
    // Unknown ids are reported, with how many and the first ones.
    write_file(tmp.file("some.txt"), "1\nzz\nyy\n");
    const auto some = search_ids(tmp, dir, "--papers " + shell_quote(tmp.file("some.txt")));
    EXPECT_EQ(some.ids, (Ids{"1"}));
    EXPECT_NE(some.err.find("--papers: 2 of the 3 papers listed are not in the corpus ('zz', 'yy')"), std::string::npos) << some.err;
}

// --papers by DOI with the record's own list by id: each side is resolved, so they meet in paper 2.
TEST(HostileFilters, PapersByAliasAndByIdMeetInTheirRows) {
    TempDir tmp;
    const std::string dir = pubmed_corpus(tmp);
    write_file(tmp.file("dois.txt"), "10.1/b\ndoi:10.1/c\n");
    const auto found = search_ids(tmp, dir, "--papers " + shell_quote(tmp.file("dois.txt")),
                                  "{\"id\": \"q\", \"filter\": {\"papers\": [\"2\", \"pmid:4\"]}}");
    EXPECT_EQ(found.ids, (Ids{"2"})) << found.err;
}

TEST(HostileFilters, EmptyOrMalformedValuesAreUsageErrorsNamingTheFlag) {
    TempDir tmp;
    const std::string dir = pubmed_corpus(tmp);
    for (const std::string& flag : {std::string("--field ''"), std::string("--field ,"), std::string("--venue 'J A,,J B'"),
                                    std::string("--min-citations 99999999999999999999"), std::string("--min-citations ''"),
                                    std::string("--min-citations 0x10"), std::string("--papers ''"), std::string("--venue-file ''")}) {
        const auto r = search_ids(tmp, dir, flag);
        EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
        EXPECT_NE(r.err.find(flag.substr(0, flag.find(' '))), std::string::npos) << flag << ": " << r.err;
    }
    const auto null_filter = search_ids(tmp, dir, "", "{\"id\": \"q\", \"filter\": null}");
    EXPECT_EQ(null_filter.exit_code, 3);
    EXPECT_NE(null_filter.err.find("q.jsonl:1: 'filter' is null"), std::string::npos) << null_filter.err;
    write_file(tmp.file("ideas.jsonl"), "{\"id\": \"i\", \"title\": \"x\"}\n");
    const float v[4] = {1, 0, 0, 0};
    novelty::write_npy(tmp.file("iv.npy"), novelty::DType::f32, 1, 4, v);
    const auto d = run_cli("dedup --ideas " + shell_quote(tmp.file("ideas.jsonl")) + " --vectors " + shell_quote(tmp.file("iv.npy")) +
                           " --threshold ''");
    EXPECT_EQ(d.exit_code, 2) << d.err;
    EXPECT_NE(d.err.find("--threshold"), std::string::npos) << d.err;
}

// A venue that holds commas: from a file, or with --venue given more than once.
TEST(HostileFilters, VenuesWithCommasComeFromAFileAndVenueRepeats) {
    TempDir tmp;
    const std::string dir = pubmed_corpus(tmp);
    write_file(tmp.file("venues.txt"), "Knee Surgery, Sports Traumatology, Arthroscopy\n  J A  \n");
    EXPECT_EQ(search_ids(tmp, dir, "--venue-file " + shell_quote(tmp.file("venues.txt"))).ids, (Ids{"1", "4"}));
    EXPECT_EQ(search_ids(tmp, dir, "--venue 'J A' --venue 'J B'").ids, (Ids{"1", "2", "3"}));
    EXPECT_EQ(search_ids(tmp, dir, "--venue 'J A,J B' --venue-file " + shell_quote(tmp.file("venues.txt"))).ids,
              (Ids{"1", "2", "3", "4"}));
}

// The shared ML corpus holds 600 records whose id is "cvpr2016:None" (paperlists records without
// a key). Given as queries, the file is refused naming the file and both lines of the first repeat
// (issue 48), not only the id; so is a repeat far from its first line, and in a .gz file.
TEST(HostileCli, ARepeatedQueryIdNamesTheFileAndBothLines) {
    TempDir tmp;
    const std::string dir = novelty::test::three_paper_corpus(tmp);
    const std::string shared = std::string(NOVELTY_SHARED_DATA_DIR) + "/ml_papers_paperlists.jsonl.gz";
    if (std::filesystem::exists(shared)) {
        const auto r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(shared) + " --k 1");
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_NE(r.err.find(shared + ":16090: duplicate id 'cvpr2016:None' (first at line 16089)"), std::string::npos)
            << r.err;
    }
    std::string records;
    for (int i = 0; i < 300; ++i) records += "{\"id\": \"q" + std::to_string(i) + "\", \"text\": \"x\"}\n";
    write_file(tmp.file("far.jsonl"), "{\"id\": \"q7\", \"text\": \"first\"}\n" + records);
    for (const std::string& command : {std::string("search --corpus ") + shell_quote(dir) + " --queries ",
                                       std::string("score --corpus ") + shell_quote(dir) + " --ideas "}) {
        const auto r = run_cli(command + shell_quote(tmp.file("far.jsonl")));
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_NE(r.err.find(tmp.file("far.jsonl") + ":9: duplicate id 'q7' (first at line 1)"), std::string::npos) << r.err;
    }
}
