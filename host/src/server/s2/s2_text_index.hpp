// The corpus's SQLite full-text index (papers_fts: titles and abstracts, BM25) as the bulk
// search, the snippet search and the title autocompletion of the Semantic Scholar-compatible
// API use it, with the light metadata of every row those need to filter and sort. Opens its own
// read-only connection; thread-safe (one mutex).
#pragma once

#include "server/s2/s2_bulk_query.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace novelty {
class SqliteDb;
}

namespace novelty::host::s2 {

/// What bulk search filters and sorts by, per row.
struct RowMeta {
    std::string id;
    std::string sort_date;  ///< "YYYY-MM-DD" (the last day a partial date allows); "" unknown
    std::string field;
    std::string venue;
    std::optional<std::int64_t> citations;
    /// When the paper entered the corpus (UTC, ISO 8601; papers.sqlite's paper_inserted), ""
    /// when the corpus keeps no such time for it.
    std::string inserted;
};

/// A ranked passage: the row, its BM25 score (higher is better), the column it is from
/// ("title" or "abstract") and the passage as it stands in that column's text.
struct Passage {
    std::size_t row = 0;
    double score = 0;
    std::string kind;
    std::string text;
};

class S2TextIndex {
public:
    /// Opens `corpus_dir`/papers.sqlite for `rows` corpus rows; CorpusError when it has no
    /// full-text index.
    S2TextIndex(const std::string& corpus_dir, std::size_t rows);
    ~S2TextIndex();

    /// The rows that match `query`, ascending.
    std::vector<std::size_t> matching(const BulkQuery& query);
    /// Rows whose text matches any word of `text`, best BM25 first, each with its best passage (at
    /// most `tokens` words); `keep` decides which rows count, until `limit` are kept.
    std::vector<Passage> passages(const std::string& text, std::size_t limit, std::size_t tokens,
                                  const std::function<bool(std::size_t row)>& keep);
    /// Rows whose title holds every word of `text`, its last word as a prefix, best BM25 first.
    std::vector<std::size_t> title_prefix(const std::string& text, std::size_t limit);
    const RowMeta& meta(std::size_t row) const { return meta_.at(row); }
    std::size_t size() const { return meta_.size(); }

private:
    std::vector<std::size_t> rows_of(const std::string& fts_query);
    std::vector<std::size_t> evaluate(const BulkQuery& q);
    std::string fuzzy_terms(const std::string& word, int distance);
    std::string join_sql() const;

    std::unique_ptr<SqliteDb> db_;
    bool keyed_ = false;
    std::vector<RowMeta> meta_;
    std::vector<std::string> vocabulary_;  ///< the index's terms, read on the first fuzzy word
    std::mutex mutex_;
};

}  // namespace novelty::host::s2
