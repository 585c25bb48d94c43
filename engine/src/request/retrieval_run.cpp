#include "novelty/request/retrieval_run.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <utility>

namespace novelty {

namespace {

Ranking truncated(const Ranking& r, std::size_t k) {
    Ranking t = r;
    if (t.rows.size() > k) {
        t.rows.resize(k);
        t.scores.resize(k);
    }
    return t;
}

/// A QueryRewriter that returns the first n texts of a fixed list, whatever the query.
class ListRewriter : public QueryRewriter {
public:
    ListRewriter(std::string name, std::vector<std::string> texts) : name_(std::move(name)), texts_(std::move(texts)) {}
    std::string name() const override { return name_; }
    std::vector<std::string> rewrite(const std::string& /*query*/, std::size_t n) override {
        return std::vector<std::string>(texts_.begin(), texts_.begin() + static_cast<std::ptrdiff_t>(std::min(n, texts_.size())));
    }

private:
    std::string name_;
    std::vector<std::string> texts_;
};

/// The texts one mode ranks for query text `query`: the rewrites (or, for single-query
/// expansion, the query with its continuation appended), with the query itself first when
/// `include_original`, and the query alone when there is no rewrite to rank.
std::vector<std::string> mode_texts(const RewriteMode& mode, QueryRewriter& rewriter, const std::string& query,
                                    bool include_original) {
    if (!mode.append) {
        std::vector<std::string> texts = rewritten_texts(rewriter, query, mode.n, include_original);
        if (texts.empty()) texts.push_back(query);  // no rewrite for this query: its own text
        return texts;
    }
    const std::vector<std::string> continuation = rewriter.rewrite(query, 1);
    std::vector<std::string> texts;
    if (include_original || continuation.empty()) texts.push_back(query);
    if (!continuation.empty()) texts.push_back(query + " " + continuation.front());
    return texts;
}

void check_methods(const std::vector<std::string>& methods) {
    if (methods.empty()) throw UsageError("methods needs at least one of dense, bm25, hybrid", "methods");
    for (std::size_t i = 0; i < methods.size(); ++i) {
        const std::string& m = methods[i];
        if (m != "dense" && m != "bm25" && m != "hybrid")
            throw UsageError("unknown method '" + m + "' (choose from dense, bm25, hybrid)", "methods");
        if (std::find(methods.begin(), methods.begin() + static_cast<std::ptrdiff_t>(i), m) != methods.begin() + static_cast<std::ptrdiff_t>(i))
            throw UsageError("methods names '" + m + "' twice", "methods");
    }
}

std::span<const std::int64_t> excluded_of(const SearchScope& scope, std::size_t i) {
    if (scope.excluded.n_items() == 0) return {};
    return {scope.excluded.begin(i), scope.excluded.size(i)};
}

std::size_t row_limit_of(const SearchScope& scope, std::size_t i) {
    return scope.row_limit.empty() ? SIZE_MAX : scope.row_limit[i];
}

}  // namespace

std::vector<RewriteMode> retrieval_modes(const RetrievalSettings& s) {
    check_methods(s.methods);
    if (s.k < 1 || s.k > SearchBackend::max_k)
        throw UsageError("k must be between 1 and " + std::to_string(SearchBackend::max_k) + ", not " + std::to_string(s.k), "k");
    if (s.fusion_depth < 1)
        throw UsageError("fusion_depth must be at least 1", "fusion_depth");
    std::vector<RewriteMode> modes;
    if (s.expand == 0 && s.hyde == 0) return modes;
    if (s.expand_mode != "multi" && s.expand_mode != "single")
        throw UsageError("the expansion mode is '" + s.expand_mode + "'; choose multi or single", "expand_mode");
    const bool single = s.expand_mode == "single";
    if (single && s.expand > 1)
        throw UsageError("single-query expansion appends one continuation to the question, so the number of expansions must be 1", "expand");
    if (s.expand > 0) modes.push_back({"expand", s.expand, s.fuse_original, single});
    if (s.hyde > 0) modes.push_back({"hyde", s.hyde, s.fuse_original, false});
    return modes;
}

RetrievalRanker::RetrievalRanker(const Corpus& corpus, RetrievalSettings settings, std::vector<RewriteMode> modes,
                                 DenseFn dense, EmbedFn embed, CorpusGuard guard)
    : corpus_(corpus), settings_(std::move(settings)), modes_(std::move(modes)), dense_(std::move(dense)),
      embed_(std::move(embed)), guard_(std::move(guard)) {
    bool fusing = !modes_.empty();
    for (const auto& m : settings_.methods) {
        need_dense_ = need_dense_ || m != "bm25";
        need_bm25_ = need_bm25_ || m != "dense";
        fusing = fusing || m == "hybrid";
    }
    // Rankings that are only cut to k need no more than k rows; fused ones go deeper.
    depth_ = fusing ? std::max(settings_.k, std::min(settings_.fusion_depth, SearchBackend::max_k)) : settings_.k;
    // Through the corpus's own connection: the papers its rows are, even if DIR was replaced since.
    // Opening (and below, closing) its statements uses that connection too, so under the guard:
    // another thread may be reading a paper through it at the same moment.
    if (need_bm25_) with_corpus([&] { bm25_ = std::make_unique<Bm25Index>(corpus_); });
}

RetrievalRanker::~RetrievalRanker() {
    if (!bm25_) return;
    try {
        with_corpus([&] { bm25_.reset(); });
    } catch (...) {
        bm25_.reset();  // a guard that cannot be taken here: the statements are still finalised
    }
}

void RetrievalRanker::with_corpus(const std::function<void()>& use) {
    if (guard_) guard_(use);
    else use();
}

bool RetrievalRanker::need_text() const {
    return need_bm25_ || !modes_.empty();
}

std::vector<std::string> RetrievalRanker::tags() const {
    std::vector<std::string> tags = settings_.methods;
    for (const RewriteMode& mode : modes_)
        for (const auto& m : settings_.methods) tags.push_back(m + "+" + mode.tag);
    return tags;
}

std::vector<RankingsByTag> RetrievalRanker::rank(const RetrievalBatch& batch, const RewritesById& rewrites) {
    const SearchQueries& q = batch.scopes;
    const std::size_t n = batch.ids.size();
    if (batch.texts.size() != n || (need_dense_ && q.n_queries != n))
        throw UsageError("a retrieval batch needs one text and, for dense rankings, one vector per query", "queries");
    std::vector<Ranking> dense;
    if (need_dense_ && n > 0) dense = dense_(q, depth_);
    std::vector<RankingsByTag> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        Ranking bm25;
        if (need_bm25_) bm25 = bm25_one(q, i, batch.texts[i]);
        for (const auto& m : settings_.methods) {
            if (m == "dense") out[i][m] = truncated(dense[i], settings_.k);
            if (m == "bm25") out[i][m] = truncated(bm25, settings_.k);
            if (m == "hybrid") {
                const std::vector<Ranking> both{dense[i], bm25};
                out[i][m] = reciprocal_rank_fusion(both, settings_.k);
            }
        }
        rank_rewrites(batch, i, rewrites, out[i]);
    }
    return out;
}

void RetrievalRanker::rank_rewrites(const RetrievalBatch& batch, std::size_t i, const RewritesById& rewrites,
                                    RankingsByTag& out) {
    const SearchQueries& q = batch.scopes;
    const std::string& text = batch.texts[i];
    for (const RewriteMode& mode : modes_) {
        const bool hyde = mode.tag == "hyde";
        const auto it = rewrites.find(batch.ids[i]);
        ListRewriter rewriter(mode.tag, it == rewrites.end() ? std::vector<std::string>{}
                                                             : (hyde ? it->second.hyde : it->second.expand));
        // A failed LLM call leaves the query text alone (HyDE included).
        const bool failed = it != rewrites.end() && !(hyde ? it->second.hyde_error : it->second.expand_error).empty();
        const std::vector<std::string> variants = mode_texts(mode, rewriter, text, mode.include_original || failed);
        const std::vector<float> vectors = need_dense_ ? embed_(variants) : std::vector<float>{};
        for (const auto& m : settings_.methods) {
            std::size_t v = 0;
            const auto rank_text = [&](const std::string& variant) {
                std::vector<Ranking> rankings;
                if (m != "bm25") rankings.push_back(dense_one(q, i, vectors, v));
                if (m != "dense") rankings.push_back(bm25_one(q, i, variant));
                ++v;
                return rankings;
            };
            out[m + "+" + mode.tag] = fuse_texts(variants, rank_text, settings_.k);
        }
    }
}

Ranking RetrievalRanker::bm25_one(const SearchQueries& scopes, std::size_t i, const std::string& text) {
    Ranking ranking;
    const auto rank = [&] {
        ranking = bm25_->rank(text, row_limit_of(scopes.scope, i), excluded_of(scopes.scope, i), depth_, scopes.scope.filter(i));
    };
    with_corpus(rank);
    return ranking;
}

Ranking RetrievalRanker::dense_one(const SearchQueries& scopes, std::size_t i, const std::vector<float>& vectors,
                                   std::size_t v) {
    const std::size_t dim = corpus_.manifest().dim;
    if (vectors.size() < (v + 1) * dim)
        throw UsageError("the encoder made vectors of another dimension than the corpus's " + std::to_string(dim));
    SearchQueries q;
    q.vectors = vectors.data() + v * dim;
    q.n_queries = 1;
    q.dim = dim;
    const SearchScope& all = scopes.scope;
    if (!all.row_limit.empty()) q.scope.row_limit = {all.row_limit[i]};
    const auto excluded = excluded_of(all, i);
    q.scope.excluded.add(std::vector<std::int64_t>(excluded.begin(), excluded.end()));
    if (all.filter(i)) q.scope.filters = {all.filters.size() == 1 ? all.filters[0] : all.filters[i]};
    return dense_(q, depth_)[0];
}

}  // namespace novelty
