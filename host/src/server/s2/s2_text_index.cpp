#include "server/s2/s2_text_index.hpp"

#include "server/s2/s2_catalogue.hpp"
#include "server/s2/s2_error.hpp"

#include "corpus/sqlite_db.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>

namespace novelty::host::s2 {

namespace {

std::string quoted(const std::vector<std::string>& words) {
    std::string out = "\"";
    for (const auto& w : words) out += (out.size() > 1 ? " " : "") + w;  // words hold no '"'
    return out + "\"";
}

std::vector<std::size_t> intersect(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
    std::vector<std::size_t> out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

std::string without_marks(const std::string& s) {
    std::string out;
    for (const char c : s)
        if (c != '\x01' && c != '\x02') out += c;
    return out;
}

}  // namespace

S2TextIndex::S2TextIndex(const std::string& corpus_dir, std::size_t rows) {
    const std::string path = (std::filesystem::path(corpus_dir) / "papers.sqlite").string();
    db_ = std::make_unique<SqliteDb>(path, SqliteDb::Mode::read_only);
    if (!has_table(*db_, "papers_fts"))
        throw CorpusError(corpus_dir + ": papers.sqlite has no full-text index (papers_fts); import the corpus again");
    keyed_ = has_table(*db_, "paper_rows");
    meta_.resize(rows);
    const bool with_times = keyed_ && has_table(*db_, "paper_inserted");
    auto q = db_->prepare(with_times ? "SELECT r.row, d.id, coalesce(d.sort_date, ''), coalesce(d.field, ''), coalesce(d.venue, ''), "
                                       "d.citations, coalesce(i.inserted, '') FROM paper_rows r JOIN paper_data d ON d.key = r.key "
                                       "LEFT JOIN paper_inserted i ON i.key = r.key ORDER BY r.row"
                                     : "SELECT row, id, coalesce(sort_date, ''), coalesce(field, ''), coalesce(venue, ''), citations, "
                                       "'' FROM papers ORDER BY row");
    while (q.step()) {
        const auto row = static_cast<std::size_t>(q.column_int(0));
        if (row >= rows) continue;
        RowMeta& m = meta_[row];
        m.id = q.column_text(1);
        m.sort_date = q.column_text(2);
        m.field = q.column_text(3);
        m.venue = q.column_text(4);
        if (!q.column_is_null(5)) m.citations = q.column_int(5);
        m.inserted = q.column_text(6);
    }
}

S2TextIndex::~S2TextIndex() = default;

std::string S2TextIndex::join_sql() const {
    return keyed_ ? " FROM papers_fts JOIN paper_rows r ON r.key = papers_fts.rowid WHERE papers_fts MATCH ?1"
                  : " FROM papers_fts WHERE papers_fts MATCH ?1";
}

std::vector<std::size_t> S2TextIndex::rows_of(const std::string& fts_query) {
    std::vector<std::size_t> rows;
    if (fts_query.empty()) return rows;
    auto q = db_->prepare(std::string("SELECT ") + (keyed_ ? "r.row" : "papers_fts.rowid") + join_sql());
    q.bind(1, fts_query);
    while (q.step()) {
        const std::int64_t row = q.column_int(0);
        if (row >= 0 && static_cast<std::size_t>(row) < meta_.size()) rows.push_back(static_cast<std::size_t>(row));
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

std::string S2TextIndex::fuzzy_terms(const std::string& word, int distance) {
    if (vocabulary_.empty()) {
        db_->exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.s2_vocabulary USING fts5vocab(main, papers_fts, row)");
        auto q = db_->prepare("SELECT term FROM temp.s2_vocabulary");
        while (q.step()) vocabulary_.push_back(q.column_text(0));
    }
    std::string out;
    for (const std::string& term : vocabulary_)
        if (edit_distance(word, term, static_cast<std::size_t>(distance)) <= static_cast<std::size_t>(distance))
            out += (out.empty() ? "" : " OR ") + quoted({term});
    return out;
}

std::vector<std::size_t> S2TextIndex::evaluate(const BulkQuery& q) {
    using Kind = BulkQuery::Kind;
    if (q.kind == Kind::word) {
        if (q.distance > 0) return rows_of(fuzzy_terms(q.words.front(), q.distance));
        return rows_of(quoted(q.words) + (q.prefix ? "*" : ""));
    }
    if (q.kind == Kind::phrase) {
        if (q.distance <= 0) return rows_of(quoted(q.words) + (q.prefix ? "*" : ""));
        std::string near = "NEAR(";
        for (const auto& w : q.words) near += quoted({w}) + " ";
        return rows_of(near + ", " + std::to_string(q.distance) + ")");
    }
    std::vector<std::size_t> all(meta_.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    const auto without = [](const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
        std::vector<std::size_t> out;
        std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
        return out;
    };
    if (q.kind == Kind::none_of) return without(all, evaluate(q.parts.front()));
    if (q.kind == Kind::any_of) {
        std::vector<std::size_t> out;
        for (const auto& p : q.parts) {
            std::vector<std::size_t> merged, more = evaluate(p);
            std::set_union(out.begin(), out.end(), more.begin(), more.end(), std::back_inserter(merged));
            out.swap(merged);
        }
        return out;
    }
    std::vector<std::size_t> out = all;  // all_of
    for (const auto& p : q.parts) out = intersect(out, evaluate(p));
    return out;
}

std::vector<std::size_t> S2TextIndex::matching(const BulkQuery& query) {
    std::lock_guard lock(mutex_);
    return evaluate(query);
}

std::vector<Passage> S2TextIndex::passages(const std::string& text, std::size_t limit, std::size_t tokens,
                                           const std::function<bool(std::size_t row)>& keep) {
    std::string any;
    for (const std::string& w : words_of(text)) any += (any.empty() ? "" : " OR ") + quoted({w});
    std::vector<Passage> out;
    if (any.empty()) return out;
    std::lock_guard lock(mutex_);
    // The ranking first (rows and scores alone: SQLite would compute a snippet for every match
    // before sorting), then the passages of the rows kept.
    auto ranked = db_->prepare(std::string("SELECT ") + (keyed_ ? "r.row" : "papers_fts.rowid") +
                               ", papers_fts.rowid, bm25(papers_fts)" + join_sql() + " ORDER BY bm25(papers_fts)");
    ranked.bind(1, any);
    std::vector<std::int64_t> keys;
    while (out.size() < limit && ranked.step()) {
        const std::int64_t row = ranked.column_int(0);
        if (row < 0 || static_cast<std::size_t>(row) >= meta_.size() || !keep(static_cast<std::size_t>(row))) continue;
        out.push_back({static_cast<std::size_t>(row), -ranked.column_double(2), "", ""});
        keys.push_back(ranked.column_int(1));
    }
    const std::string n = std::to_string(std::clamp<std::size_t>(tokens, 1, 64));
    auto snippets = db_->prepare("SELECT snippet(papers_fts, 0, char(1), char(2), '', " + n +
                                 "), snippet(papers_fts, 1, char(1), char(2), '', " + n +
                                 ") FROM papers_fts WHERE papers_fts MATCH ?1 AND rowid = ?2");
    for (std::size_t i = 0; i < out.size(); ++i) {
        snippets.reset();
        snippets.bind(1, any);
        snippets.bind(2, keys[i]);
        if (!snippets.step()) continue;
        const std::string title = snippets.column_text(0), abstract = snippets.column_text(1);
        const bool in_abstract = abstract.find('\x01') != std::string::npos;
        out[i].kind = in_abstract ? "abstract" : "title";
        out[i].text = without_marks(in_abstract ? abstract : title);
    }
    return out;
}

std::vector<std::size_t> S2TextIndex::title_prefix(const std::string& text, std::size_t limit) {
    const std::vector<std::string> words = words_of(text);
    std::vector<std::size_t> out;
    if (words.empty()) return out;
    std::string match = "title : (";
    for (std::size_t i = 0; i < words.size(); ++i) match += (i ? " " : "") + quoted({words[i]});
    match += "*)";
    std::lock_guard lock(mutex_);
    auto q = db_->prepare(std::string("SELECT ") + (keyed_ ? "r.row" : "papers_fts.rowid") + join_sql() +
                          " ORDER BY bm25(papers_fts)");
    q.bind(1, match);
    while (out.size() < limit && q.step()) {
        const std::int64_t row = q.column_int(0);
        if (row >= 0 && static_cast<std::size_t>(row) < meta_.size()) out.push_back(static_cast<std::size_t>(row));
    }
    return out;
}

}  // namespace novelty::host::s2
