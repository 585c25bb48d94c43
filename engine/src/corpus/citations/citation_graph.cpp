#include "corpus/citations/citation_graph.hpp"

#include "corpus/citations/citation_table.hpp"
#include "util/notices.hpp"

#include <filesystem>

namespace novelty {

CitationGraph::CitationGraph(const std::string& corpus_dir, const std::string& format) {
    const std::string path = (std::filesystem::path(corpus_dir) / "papers.sqlite").string();
    db_ = std::make_unique<SqliteDb>(path, SqliteDb::Mode::read_only);
    std::string papers = "main";
    if (!citations_detail::has_citation_tables(*db_)) {
        // An older corpus: its papers.sqlite is not changed by a reader (its checksum is in the
        // manifest); the graph is built in an in-memory database beside it.
        stored_ = false;
        db_ = std::make_unique<SqliteDb>(":memory:", SqliteDb::Mode::read_write_create);
        auto attach = db_->prepare("ATTACH DATABASE ? AS corpus");
        attach.bind(1, path);
        attach.step();
        papers = "corpus";
        notice(corpus_dir + ": papers.sqlite keeps no citation graph (imported before it was stored); building it "
                            "in memory from the records' reference lists. Import the corpus again, or add papers to it "
                            "(novelty corpus add), to store it");
        db_->exec("BEGIN");
        citations_detail::build_citation_tables(*db_, format, papers, "main");
        db_->exec("COMMIT");
    }
    cite_ = "main";
    rows_ = has_table(*db_, "paper_rows", papers) ? papers + ".paper_rows" : "(SELECT row, row AS key FROM " + papers + ".papers)";
}

CitationGraph::~CitationGraph() = default;

std::vector<CitationEdge> CitationGraph::edges(SqliteStatement& q, std::size_t row) {
    q.bind(1, static_cast<std::int64_t>(row));
    std::vector<CitationEdge> out;
    while (q.step()) {
        CitationEdge e;
        if (!q.column_is_null(0)) e.row = static_cast<std::size_t>(q.column_int(0));
        e.id_kind = q.column_text(1);
        e.id = q.column_text(2);
        if (!q.column_is_null(3)) e.influential = q.column_int(3) != 0;
        if (!q.column_is_null(4)) e.contexts = q.column_text(4);
        if (!q.column_is_null(5)) e.intents = q.column_text(5);
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<CitationEdge> CitationGraph::references(std::size_t row) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto q = db_->prepare("SELECT o.row, c.id_kind, c.id, c.influential, c.contexts, c.intents FROM " + rows_ +
                          " r JOIN " + cite_ + ".citations c ON c.citing = r.key LEFT JOIN " + rows_ +
                          " o ON o.key = c.cited WHERE r.row = ? ORDER BY c.pos, c.cited_key");
    return edges(q, row);
}

std::size_t CitationGraph::n_references(std::size_t row) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto q = db_->prepare("SELECT count(*) FROM " + rows_ + " r JOIN " + cite_ + ".citations c ON c.citing = r.key WHERE r.row = ?");
    q.bind(1, static_cast<std::int64_t>(row));
    q.step();
    return static_cast<std::size_t>(q.column_int(0));
}

std::vector<CitationEdge> CitationGraph::citations(std::size_t row) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto q = db_->prepare("SELECT o.row, '', '', c.influential, c.contexts, c.intents FROM " + rows_ + " r JOIN " + cite_ +
                          ".citations c ON c.cited = r.key JOIN " + rows_ +
                          " o ON o.key = c.citing WHERE r.row = ? AND c.citing != c.cited ORDER BY o.row");
    return edges(q, row);
}

std::optional<std::size_t> CitationGraph::row_of_key(const std::string& key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto q = db_->prepare("SELECT r.row FROM " + cite_ + ".citation_keys k JOIN " + rows_ +
                          " r ON r.key = k.paper WHERE k.key = ? ORDER BY k.paper LIMIT 1");
    q.bind(1, key);
    if (!q.step()) return std::nullopt;
    return static_cast<std::size_t>(q.column_int(0));
}

}  // namespace novelty
