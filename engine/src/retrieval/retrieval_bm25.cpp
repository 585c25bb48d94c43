// BM25 retrieval from the corpus's SQLite FTS5 index, limited to the cutoff prefix in SQL.
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "corpus/corpus_access.hpp"
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
    std::unique_ptr<SqliteDb> own_db;  ///< opened by path; null when reading through a Corpus's
    SqliteDb* db = nullptr;
    std::optional<SqliteStatement> ranked;
    /// Keyed layout: the row of each key (-1 for none), and per row r the largest key among rows
    /// [0, r]. The full-text index is asked for the keys up to max_key[R - 1] alone (it takes a
    /// rowid range and scores no match outside it), best first; rows come from row_of_key here,
    /// not from a join per match, and ties are ordered by row here. After appends alone key = row
    /// and that range is exactly rows [0, R); after renumbering it is a superset.
    bool keyed = false;
    std::vector<std::int64_t> row_of_key, max_key;
};

// Reads the keyed layout's row table first.
void Bm25Index::open_ranking(const std::string& corpus_dir) {
    Impl& impl = *impl_;
    if (!has_table(*impl.db, "papers_fts"))
        throw CorpusError(corpus_dir + ": papers.sqlite has no full-text index (papers_fts); import the corpus again "
                                       "with 'novelty corpus import' to build it");
    // bm25() is negative, lower is better; ties go by corpus row. In the keyed layout the
    // index's rowid is the paper's stable key and paper_rows gives its row; in corpora of the
    // older layout the rowid is the row.
    impl.keyed = has_table(*impl.db, "paper_rows");
    if (impl.keyed) {
        auto keys = impl.db->prepare("SELECT row, key FROM paper_rows ORDER BY row");
        while (keys.step()) {
            const std::int64_t row = keys.column_int(0), key = keys.column_int(1);
            if (key < 0 || row != static_cast<std::int64_t>(impl.max_key.size()))
                throw CorpusError(corpus_dir + ": papers.sqlite is damaged (its paper_rows table is not numbered 0, 1, ... "
                                               "with keys); import the corpus again");
            if (static_cast<std::size_t>(key) >= impl.row_of_key.size()) impl.row_of_key.resize(static_cast<std::size_t>(key) + 1, -1);
            impl.row_of_key[static_cast<std::size_t>(key)] = row;
            impl.max_key.push_back(std::max(key, impl.max_key.empty() ? std::int64_t{-1} : impl.max_key.back()));
        }
    }
    impl.ranked.emplace(impl.db->prepare(
        impl.keyed ? "SELECT rowid, bm25(papers_fts) AS s FROM papers_fts WHERE papers_fts MATCH ?1 AND rowid <= ?2 "
                     "ORDER BY s LIMIT ?3"
                   : "SELECT rowid, bm25(papers_fts) AS s FROM papers_fts WHERE papers_fts MATCH ?1 AND rowid < ?2 "
                     "ORDER BY s, rowid LIMIT ?3"));
}

Bm25Index::Bm25Index(const std::string& corpus_dir) : impl_(std::make_unique<Impl>()) {
    const std::string path = (std::filesystem::path(corpus_dir) / "papers.sqlite").string();
    if (!std::filesystem::exists(path)) throw CorpusError(corpus_dir + ": papers.sqlite is missing");
    impl_->own_db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::read_only);
    impl_->db = impl_->own_db.get();
    open_ranking(corpus_dir);
}

Bm25Index::Bm25Index(const Corpus& corpus) : impl_(std::make_unique<Impl>()) {
    impl_->db = &corpus_detail::papers_db(corpus);
    open_ranking(corpus.dir());
}

Bm25Index::~Bm25Index() = default;
Bm25Index::Bm25Index(Bm25Index&&) noexcept = default;
Bm25Index& Bm25Index::operator=(Bm25Index&&) noexcept = default;

namespace {

// Keyed layout: the first `limit` matches best first (equal scores in any order; -1: all) mapped
// to rows; rows at or past `row_limit` dropped, equal scores ordered by row, until `depth` rows
// are kept. Returns false when the ranking may be incomplete: the limit cut the matches before
// `depth` rows were kept or inside the last score kept (the caller asks again for more).
bool rank_keyed(SqliteStatement& q, const std::vector<std::int64_t>& row_of_key, std::size_t row_limit,
                const std::unordered_set<std::int64_t>& skip, std::size_t depth, const RowFilter* filter,
                std::int64_t limit, Ranking& ranking) {
    q.bind(3, limit);
    std::vector<std::int64_t> tied;  // rows of the current score
    double tied_score = 0;
    auto flush = [&] {
        std::sort(tied.begin(), tied.end());
        for (const std::int64_t row : tied) {
            if (ranking.size() >= depth) break;
            if (skip.count(row) || (filter && !filter->allows(row))) continue;
            ranking.rows.push_back(row);
            ranking.scores.push_back(-tied_score);
        }
        tied.clear();
    };
    std::int64_t n_read = 0;
    while (ranking.size() < depth && q.step()) {
        ++n_read;
        const std::int64_t key = q.column_int(0);
        const double score = q.column_double(1);
        const std::int64_t row = key >= 0 && static_cast<std::size_t>(key) < row_of_key.size() ? row_of_key[key] : -1;
        if (row < 0 || row >= static_cast<std::int64_t>(row_limit)) continue;
        if (!tied.empty() && score != tied_score) flush();
        tied_score = score;
        tied.push_back(row);
    }
    if (ranking.size() >= depth) return true;  // filled by a score that a different one followed
    if (limit >= 0 && n_read >= limit) return false;
    flush();  // every match was read
    return true;
}

}  // namespace

Ranking Bm25Index::rank(const std::string& text, std::size_t row_limit, std::span<const std::int64_t> excluded,
                        std::size_t depth, const RowFilter* filter) {
    if (depth < 1) throw UsageError("BM25 retrieval depth must be at least 1");
    Ranking ranking;
    const std::string match = fts5_query(text);
    if (match.empty() || row_limit == 0) return ranking;
    const std::unordered_set<std::int64_t> skip(excluded.begin(), excluded.end());
    // No cutoff (SIZE_MAX) is every row; as a signed SQL value it would be -1, which is none.
    row_limit = std::min(row_limit, impl_->keyed ? impl_->max_key.size() : static_cast<std::size_t>(INT64_MAX));
    SqliteStatement& q = *impl_->ranked;
    q.reset();
    q.bind(1, match);
    if (impl_->keyed) {
        if (impl_->max_key.empty()) return ranking;
        // Enough matches for `depth` rows and the one after them (which closes the last score)
        // when every match is a row before the cutoff, as after appends alone; more when not.
        std::int64_t limit = filter ? -1 : static_cast<std::int64_t>(depth + skip.size() + 1);
        for (;;) {
            q.bind(1, match);
            q.bind(2, impl_->max_key[row_limit - 1]);
            if (rank_keyed(q, impl_->row_of_key, row_limit, skip, depth, filter, limit, ranking)) break;
            ranking = Ranking{};
            limit *= 4;
            q.reset();  // (clears the bindings too)
        }
        q.reset();
        return ranking;
    }
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
