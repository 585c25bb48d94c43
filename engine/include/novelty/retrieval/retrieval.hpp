// Literature retrieval under a per-query publication-date cutoff: dense (cosine) rankings through
// a SearchIndex, BM25 rankings from the corpus's SQLite FTS5 index, reciprocal-rank fusion of
// any set of rankings, and fusion over LLM rewrites of a query (expansion, hypothetical
// abstracts) behind a small interface. docs/retrieval.md describes the method.
//
// A cutoff is a row prefix: corpus rows are in publication-date order, so "published on or before
// the cutoff" is exactly rows [0, row_limit) (Corpus::rows_through). No function here returns a
// row at or beyond its query's row_limit, nor an excluded row.
#pragma once

#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace novelty {

class Corpus;

/// One ranked list of corpus rows, best first. rows.size() == scores.size(); scores never
/// increase down the list (higher is better for every method).
struct Ranking {
    std::vector<std::int64_t> rows;
    std::vector<double> scores;

    std::size_t size() const { return rows.size(); }
};

/// Dense rankings: each query's `depth` most cosine-similar searchable rows, via
/// index.search (ties by lower row). `queries` holds normalised float32 vectors, per-query
/// row limits and excluded rows (SearchQueries). Scores are cosine similarities. A query with
/// fewer searchable rows than `depth` gets all of them. Requires 1 <= depth <= SearchBackend::max_k.
std::vector<Ranking> dense_rankings(SearchIndex& index, const SearchQueries& queries, std::size_t depth);

/// The FTS5 query for free text: the text's terms (runs of ASCII letters and digits, and of
/// bytes >= 0x80), lower-cased, English stopwords and one-character ASCII terms dropped, each
/// kept once in order of first appearance, each double-quoted, joined with OR. "" when no term
/// is left (then BM25 ranks nothing).
std::string fts5_query(const std::string& text);

/// BM25 over the FTS5 table `papers_fts` (title, abstract; equal weights) that `novelty corpus
/// import` builds in papers.sqlite. Ranking is SQLite's own bm25() (k1 = 1.2, b = 0.75). Its
/// collection statistics (document count, average length, document frequencies) are those of
/// the whole corpus; only the documents returned are limited to the cutoff prefix.
class Bm25Index {
public:
    /// Opens DIR/papers.sqlite read-only. Throws CorpusError when it is missing or has no
    /// papers_fts table (a corpus built before the full-text index: import it again).
    explicit Bm25Index(const std::string& corpus_dir);
    /// Reads the papers.sqlite `corpus` opened, through its own connection: the same papers as
    /// its rows and vectors even when its directory was replaced since (an import --overwrite, an
    /// add through a copy), where opening DIR again would rank another corpus's rows. `corpus`
    /// must outlive the index, and calls to rank() are serialised with the corpus's other uses.
    /// Throws CorpusError as above.
    explicit Bm25Index(const Corpus& corpus);
    ~Bm25Index();
    Bm25Index(Bm25Index&&) noexcept;
    Bm25Index& operator=(Bm25Index&&) noexcept;

    /// The `depth` best rows among [0, row_limit) that match fts5_query(text), minus `excluded`
    /// and rows `filter` does not allow (null: none), by BM25 score descending (score =
    /// -bm25(), so higher is better), ties by lower row. Empty when no term matches or row_limit
    /// is 0. Requires depth >= 1.
    Ranking rank(const std::string& text, std::size_t row_limit, std::span<const std::int64_t> excluded,
                 std::size_t depth, const RowFilter* filter = nullptr);

private:
    struct Impl;
    /// Prepares the ranking statement on impl_->db (CorpusError naming `corpus_dir`).
    void open_ranking(const std::string& corpus_dir);
    std::unique_ptr<Impl> impl_;
};

/// The constant of reciprocal-rank fusion used by default (Cormack et al.; the ScholarCatalyst
/// multi-query setting).
inline constexpr double rrf_k = 60.0;

/// Reciprocal-rank fusion: each row scores sum over the rankings it appears in of
/// 1 / (k + rank), rank 1-based. Returns the `depth` best rows by that score descending, ties by
/// lower row. A row listed twice in one ranking counts at its first (best) rank. No rankings, or
/// only empty ones, give an empty ranking. Requires k > 0 and depth >= 1.
Ranking reciprocal_rank_fusion(std::span<const Ranking> rankings, std::size_t depth, double k = rrf_k);

/// Makes new texts from a query: query expansion (rewritten or augmented questions) or HyDE
/// (hypothetical abstracts of papers that would help). Implementations call an LLM
/// (novelty::host::LlmRewriter) or read lists made elsewhere; tests use fakes. The engine never
/// calls the network itself.
class QueryRewriter {
public:
    virtual ~QueryRewriter() = default;
    /// Names the rewriter and its model in provenance and run tags, e.g. "expand" or "hyde".
    virtual std::string name() const = 0;
    /// Up to n texts made from `query` (fewer is allowed; more is an Error). Throws Error on failure.
    virtual std::vector<std::string> rewrite(const std::string& query, std::size_t n) = 0;
};

/// The texts to rank for one query under a rewriter: the query itself first when
/// `include_original`, then the rewriter's texts, with surrounding whitespace trimmed, empty
/// texts and exact repeats dropped. Throws Error when the rewriter returns more than n texts.
std::vector<std::string> rewritten_texts(QueryRewriter& rewriter, const std::string& query, std::size_t n,
                                         bool include_original);

/// Ranks each text with `rank_text` (which may return several rankings per text, e.g. dense and
/// BM25 for a hybrid) and fuses all of them with reciprocal_rank_fusion(depth, k).
Ranking fuse_texts(const std::vector<std::string>& texts,
                   const std::function<std::vector<Ranking>(const std::string& text)>& rank_text, std::size_t depth,
                   double k = rrf_k);

}  // namespace novelty
