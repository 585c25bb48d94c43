// BM25 retrieval from the corpus's SQLite FTS5 index, limited to the cutoff prefix in SQL.
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "corpus/sqlite_db.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <unordered_set>

namespace novelty {

namespace {

// Common English function words: they match most abstracts, add nothing to a BM25 ranking and
// make every query slow.
const std::unordered_set<std::string>& stopwords() {
    static const std::unordered_set<std::string> words = {
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
        "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
        "did", "do", "does", "doing", "down", "during", "each", "either", "few", "for", "from", "further", "had",
        "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "however", "i", "if", "in",
        "into", "is", "it", "its", "itself", "just", "may", "me", "might", "more", "most", "must", "my", "no",
        "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own",
        "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then",
        "there", "these", "they", "this", "those", "through", "thus", "to", "too", "under", "until", "up", "upon",
        "us", "very", "via", "was", "we", "were", "what", "when", "where", "whether", "which", "while", "who",
        "whom", "why", "will", "with", "within", "without", "would", "you", "your", "yours"};
    return words;
}

bool is_term_byte(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

}  // namespace

std::string fts5_query(const std::string& text) {
    std::string query;
    std::unordered_set<std::string> seen;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!is_term_byte(static_cast<unsigned char>(text[i]))) {
            ++i;
            continue;
        }
        std::string term;
        bool ascii_only = true;
        while (i < text.size() && is_term_byte(static_cast<unsigned char>(text[i]))) {
            const auto c = static_cast<unsigned char>(text[i]);
            if (c >= 0x80) ascii_only = false;
            term += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c);
            ++i;
        }
        if ((ascii_only && term.size() < 2) || stopwords().count(term) || !seen.insert(term).second) continue;
        if (!query.empty()) query += " OR ";
        query += '"' + term + '"';  // terms hold no '"', so quoting needs no escapes
    }
    return query;
}

struct Bm25Index::Impl {
    std::unique_ptr<SqliteDb> db;
    std::optional<SqliteStatement> ranked;
};

Bm25Index::Bm25Index(const std::string& corpus_dir) : impl_(std::make_unique<Impl>()) {
    const std::string path = (std::filesystem::path(corpus_dir) / "papers.sqlite").string();
    if (!std::filesystem::exists(path)) throw CorpusError(corpus_dir + ": papers.sqlite is missing");
    impl_->db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::read_only);
    auto has_fts = impl_->db->prepare("SELECT count(*) FROM sqlite_master WHERE name = 'papers_fts'");
    has_fts.step();
    if (has_fts.column_int(0) == 0)
        throw CorpusError(corpus_dir + ": papers.sqlite has no full-text index (papers_fts); import the corpus again "
                                       "with 'novelty corpus import' to build it");
    // bm25() is negative, lower is better; ties go by corpus row. In the keyed layout the
    // index's rowid is the paper's stable key and paper_rows gives its row; in corpora of the
    // older layout the rowid is the row.
    auto keyed = impl_->db->prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'paper_rows'");
    keyed.step();
    impl_->ranked.emplace(impl_->db->prepare(
        keyed.column_int(0) > 0
            ? "SELECT r.row, bm25(papers_fts) AS s FROM papers_fts JOIN paper_rows r ON r.key = papers_fts.rowid "
              "WHERE papers_fts MATCH ?1 AND r.row < ?2 ORDER BY s, r.row LIMIT ?3"
            : "SELECT rowid, bm25(papers_fts) AS s FROM papers_fts WHERE papers_fts MATCH ?1 AND rowid < ?2 "
              "ORDER BY s, rowid LIMIT ?3"));
}

Bm25Index::~Bm25Index() = default;
Bm25Index::Bm25Index(Bm25Index&&) noexcept = default;
Bm25Index& Bm25Index::operator=(Bm25Index&&) noexcept = default;

Ranking Bm25Index::rank(const std::string& text, std::size_t row_limit, std::span<const std::int64_t> excluded,
                        std::size_t depth, const RowFilter* filter) {
    if (depth < 1) throw UsageError("BM25 retrieval depth must be at least 1");
    Ranking ranking;
    const std::string match = fts5_query(text);
    if (match.empty() || row_limit == 0) return ranking;
    const std::unordered_set<std::int64_t> skip(excluded.begin(), excluded.end());
    SqliteStatement& q = *impl_->ranked;
    q.reset();
    q.bind(1, match);
    q.bind(2, static_cast<std::int64_t>(row_limit));
    // A filter may reject any number of matches: then every match is read (LIMIT -1).
    q.bind(3, filter ? std::int64_t{-1} : static_cast<std::int64_t>(depth + skip.size()));
    while (q.step() && ranking.size() < depth) {
        const std::int64_t row = q.column_int(0);
        if (skip.count(row) || (filter && !filter->allows(row))) continue;
        ranking.rows.push_back(row);
        ranking.scores.push_back(-q.column_double(1));
    }
    q.reset();
    return ranking;
}

}  // namespace novelty
