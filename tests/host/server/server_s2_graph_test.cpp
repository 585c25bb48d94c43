// The Semantic Scholar-compatible routes over what papers.sqlite keeps beside the papers: the
// citation graph of a corpus that keeps none (imported before it was stored) is still served,
// and snippet search's insertedBefore counts the papers that were in the corpus before that day
// (a revised paper keeps the time it first came in).
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_add.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty_host/server/server.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace novelty;
using novelty::host::Server;
using novelty::host::ServerOptions;
using novelty::test::TempDir;
using novelty::test::write_file;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A paper and its vector, as two lines of an s2 file.
std::string s2_lines(int corpusid, const std::string& title, int year, const json& refs, const json& vector) {
    return json{{"corpusid", corpusid}, {"title", title}, {"year", year}, {"references", refs}}.dump() + "\n" +
           json{{"corpusid", corpusid}, {"model", "specter_v2"}, {"vector", vector}}.dump() + "\n";
}

ImportOptions s2_import(const std::string& file, const std::string& out) {
    ImportOptions o;
    o.sources.push_back({file, ImportFormat::s2, ""});
    o.out_dir = out;
    return o;
}

/// Runs `sql` on the corpus's papers.sqlite and records the file's new checksums in its manifest
/// (as if the corpus had been written so).
void edit_papers(const std::string& dir, const std::string& sql) {
    const std::string path = (fs::path(dir) / "papers.sqlite").string();
    {
        SqliteDb db(path, SqliteDb::Mode::read_write);
        db.exec(sql);
    }
    CorpusManifest m = read_manifest(dir);
    m.papers_sha256 = sha256_file(path);
    m.papers_fingerprint = file_fingerprint(path);
    write_manifest(dir, m);
}

json get(int port, const std::string& path) {
    httplib::Client client("127.0.0.1", port);
    auto res = client.Get(path.c_str());
    if (!res || res->status != 200) return json{{"status", res ? res->status : -1}};
    return json::parse(res->body);
}

ServerOptions serving(const std::string& dir) {
    ServerOptions o;
    o.corpus_dir = dir;
    o.port = 0;
    o.threads = 1;
    return o;
}

std::vector<std::string> paper_ids(const json& reply, const char* side) {
    std::vector<std::string> out;
    for (const auto& e : reply.at("data")) out.push_back(e[side]["paperId"].is_null() ? "null" : e[side]["paperId"].get<std::string>());
    return out;
}

}  // namespace

TEST(ServerS2Graph, ACorpusThatKeepsNoGraphStillServesCitationsAndReferences) {
    TempDir tmp;
    write_file(tmp.file("p.jsonl"), s2_lines(1, "Graph search origins", 2001, json::array(), {1, 0, 0, 0}) +
                                        s2_lines(2, "Graph search sequel", 2005, {1, 99}, {0, 1, 0, 0}) +
                                        s2_lines(3, "Graph search third", 2008, {1, 2}, {0, 0, 1, 0}));
    import_corpus(s2_import(tmp.file("p.jsonl"), tmp.file("c")));
    edit_papers(tmp.file("c"), "DROP TABLE citations; DROP TABLE citation_keys; VACUUM;");
    Server server(serving(tmp.file("c")));
    server.start();
    EXPECT_EQ(paper_ids(get(server.port(), "/graph/v1/paper/1/citations"), "citingPaper"), (std::vector<std::string>{"2", "3"}));
    const json refs = get(server.port(), "/graph/v1/paper/CorpusId:2/references?fields=externalIds");
    EXPECT_EQ(paper_ids(refs, "citedPaper"), (std::vector<std::string>{"1", "null"}));
    EXPECT_EQ(refs["data"][1]["citedPaper"]["externalIds"], (json{{"CorpusId", "99"}}));
}

TEST(ServerS2Graph, InsertedBeforeCountsThePapersInTheCorpusBeforeThatDay) {
    TempDir tmp;
    write_file(tmp.file("p0.jsonl"), s2_lines(1, "Graph search origins", 2001, json::array(), {1, 0, 0, 0}) +
                                         s2_lines(2, "Graph search sequel", 2005, json::array(), {0, 1, 0, 0}));
    import_corpus(s2_import(tmp.file("p0.jsonl"), tmp.file("c")));
    // As if imported in 2010: papers 1 and 2 came in then.
    edit_papers(tmp.file("c"), "UPDATE paper_inserted SET inserted = '2010-03-04T05:06:07Z'");
    // Paper 2 revised and paper 3 added now: 2 keeps its time, 3 is new.
    write_file(tmp.file("p1.jsonl"), s2_lines(2, "Graph search sequel, revised", 2005, json::array(), {0, 1, 0, 0}) +
                                         s2_lines(3, "Graph search third", 2008, json::array(), {0, 0, 1, 0}));
    AddPapersOptions add;
    add.sources.push_back({tmp.file("p1.jsonl"), ImportFormat::s2, ""});
    EXPECT_FALSE(add_papers(tmp.file("c"), add).rebuilt);
    // An abstract alone for paper 1 makes the next add rebuild papers.sqlite: the times stay.
    write_file(tmp.file("a2.jsonl"), json{{"corpusid", 1}, {"abstract", "Where graph search began."}}.dump() + "\n");
    add.sources = {{tmp.file("a2.jsonl"), ImportFormat::s2, ""}};
    EXPECT_TRUE(add_papers(tmp.file("c"), add).rebuilt);
    Server server(serving(tmp.file("c")));
    server.start();
    const auto found = [&](const std::string& before) {
        const json r = get(server.port(), "/graph/v1/snippet/search?query=graph&insertedBefore=" + before);
        std::vector<std::string> ids;
        for (const auto& s : r.at("data")) ids.push_back(s["paper"]["paperId"].get<std::string>());
        std::sort(ids.begin(), ids.end());
        return ids;
    };
    EXPECT_EQ(found("2011"), (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(found("2010-03-05"), (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(found("2010-03-04"), std::vector<std::string>{});  // before that day: none yet
    EXPECT_EQ(found("9999"), (std::vector<std::string>{"1", "2", "3"}));
    EXPECT_EQ(get(server.port(), "/graph/v1/snippet/search?query=graph&insertedBefore=2010-13")["status"], 400);
}
