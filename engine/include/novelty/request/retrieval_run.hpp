// The request layer's literature retrieval, shared by `novelty retrieve` and the Python package's
// novelty.retrieve: each query's dense, BM25 and hybrid rankings cut to k, the rankings fused
// over rewrites of its text (query expansion, HyDE; the rewrites come from an LLM through
// novelty::host::LlmRewriting, or from a file), and the JSON Lines record of one query. One
// implementation, so that both edges give the same records for the same input.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "novelty/search/search.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace novelty {

/// One query's rewrites: "expand" (rewritten or augmented questions, or one continuation) and
/// "hyde" (hypothetical abstracts), each in the order made. An error is set when the LLM call that
/// should have made the list failed: then that mode ranks the query text alone (the list is empty).
struct QueryRewrites {
    std::vector<std::string> expand;
    std::vector<std::string> hyde;
    std::string expand_error;  ///< "" = no failure
    std::string hyde_error;
};

/// Rewrites by query id.
using RewritesById = std::map<std::string, QueryRewrites>;

/// Reads `{"id": QID, "expand": [STR...], "hyde": [STR...]}` per line (both lists optional; other
/// keys ignored), or the JSON Lines output of a retrieval itself:
/// `{"query": QID, "rewrites": {"expand": [...], "hyde": [...]}, "rewrite_errors": {...}}`, so a
/// run's rewrites can be fed back. Throws InputError naming the file and line for malformed JSON,
/// a missing or repeated id, or a list that is not an array of strings.
RewritesById read_rewrites_file(const std::string& path);

/// What to retrieve (the flags of `novelty retrieve`, the arguments of novelty.retrieve).
struct RetrievalSettings {
    std::vector<std::string> methods{"dense", "bm25", "hybrid"};  ///< each of dense, bm25, hybrid at most once
    std::size_t k = 100;              ///< results per query and method, 1..SearchBackend::max_k
    std::size_t fusion_depth = 1000;  ///< rows of each ranking fed to fusion (capped at max_k)
    std::size_t expand = 0;           ///< expansion texts per query; 0 = no expansion
    std::string expand_mode = "multi";  ///< "multi" (fuse the rewrites) or "single" (append one continuation)
    std::size_t hyde = 0;             ///< hypothetical abstracts per query; 0 = no HyDE
    bool fuse_original = false;       ///< the query text's own ranking is fused with the rewrites too
};

/// One rewriting mode of a run.
struct RewriteMode {
    std::string tag;                ///< "expand" | "hyde"
    std::size_t n = 0;              ///< rewrites per query
    bool include_original = false;  ///< the query text's own ranking is fused too
    bool append = false;            ///< single-query expansion: rank the query with its continuation appended
};

/// Checks the settings' methods, k and fusion depth, and returns the rewriting modes they ask for
/// (expand first, then hyde; empty when neither). Where the rewrites come from (an LLM, a file)
/// is the caller's to check. Throws UsageError naming the parameter (methods, k, fusion_depth,
/// expand_mode, expand) for an unknown or repeated method, none, k or a depth out of range, a
/// mode other than multi/single, or single with expand > 1.
std::vector<RewriteMode> retrieval_modes(const RetrievalSettings& settings);

/// A batch of queries to rank: their ids (which key the rewrites), texts (what BM25 and the
/// rewriters read; unused when only dense is asked for) and, in `scopes`, their vectors (n x dim
/// float32; null when no method is dense), row limits, excluded rows and filters.
struct RetrievalBatch {
    std::span<const std::string> ids;
    std::span<const std::string> texts;
    SearchQueries scopes;
};

/// Rankings of one query by tag: each method ("dense", "bm25", "hybrid"), then each method with
/// each rewrite mode ("dense+expand", "hybrid+hyde"), each cut to k.
using RankingsByTag = std::map<std::string, Ranking>;

/// Ranks batches of queries under one set of settings. Dense rankings come from `dense` (a
/// SearchIndex, e.g. dense_rankings under the caller's lock), BM25 from the corpus's FTS5 index,
/// and the rewrites' vectors from `embed` (n texts -> n x dim float32, the corpus's encoder).
/// Rankings are best first, ties by lower row; no row at or past a query's row limit, none it
/// excludes, none its filter denies. Not thread-safe (one BM25 connection).
class RetrievalRanker {
public:
    using DenseFn = std::function<std::vector<Ranking>(const SearchQueries& queries, std::size_t depth)>;
    using EmbedFn = std::function<std::vector<float>(const std::vector<std::string>& texts)>;
    /// Runs its argument while the caller's lock on `corpus` is held (for a corpus other threads
    /// use too); the BM25 rankings read through the corpus's own connection (Bm25Index).
    using CorpusGuard = std::function<void(const std::function<void()>& use)>;

    /// `modes` from retrieval_modes(settings, ...). Opens the BM25 index, through `corpus` (the
    /// papers it opened, even if its directory was replaced since), when a method needs it
    /// (CorpusError for a corpus without one). Each BM25 ranking runs inside `guard` when given.
    RetrievalRanker(const Corpus& corpus, RetrievalSettings settings, std::vector<RewriteMode> modes, DenseFn dense,
                    EmbedFn embed, CorpusGuard guard = {});
    ~RetrievalRanker();

    bool need_dense() const { return need_dense_; }
    /// True when a method or a rewrite reads the query text (BM25, hybrid, any rewriting).
    bool need_text() const;
    const std::vector<RewriteMode>& modes() const { return modes_; }
    /// Every ranking's tag, in output order: the methods, then each mode's methods.
    std::vector<std::string> tags() const;

    /// The rankings of each query of `batch`, by tag. A query without an entry in `rewrites`, or
    /// whose mode failed, ranks its own text in that mode.
    std::vector<RankingsByTag> rank(const RetrievalBatch& batch, const RewritesById& rewrites);

private:
    Ranking dense_one(const SearchQueries& scopes, std::size_t i, const std::vector<float>& vectors, std::size_t v);
    /// Runs `use` inside guard_ (as is without one): every use of the corpus's connection.
    void with_corpus(const std::function<void()>& use);
    /// The BM25 ranking of `text` for query i of `scopes`, inside guard_.
    Ranking bm25_one(const SearchQueries& scopes, std::size_t i, const std::string& text);
    void rank_rewrites(const RetrievalBatch& batch, std::size_t i, const RewritesById& rewrites, RankingsByTag& out);

    const Corpus& corpus_;
    RetrievalSettings settings_;
    std::vector<RewriteMode> modes_;
    DenseFn dense_;
    EmbedFn embed_;
    CorpusGuard guard_;
    bool need_dense_ = false, need_bm25_ = false;
    std::size_t depth_ = 0;
    std::unique_ptr<Bm25Index> bm25_;
};

/// One query's JSON Lines record, as `novelty retrieve --jsonl` writes it (one line, no newline):
/// {"query", "cutoff" (null when none), "searchable", "results": {tag: [{"id", "row", "rank",
/// "score", "title"}]}} and, when `modes` is not empty, "rewrites" (the texts each mode used),
/// "expand_mode", "fuse_original" and "rewrite_errors" (only when a mode failed). Reads ids and
/// titles from the corpus (not thread-safe with other uses of it).
std::string retrieval_record_json(const Corpus& corpus, const std::string& query_id, const std::string& cutoff,
                                  std::size_t searchable, const RankingsByTag& rankings,
                                  const std::vector<std::string>& tags, const std::vector<RewriteMode>& modes,
                                  const RewritesById& rewrites);

}  // namespace novelty
