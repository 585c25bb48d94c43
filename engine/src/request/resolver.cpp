#include "novelty/request/resolver.hpp"

#include "novelty/corpus/vectors.hpp"
#include "novelty/encoder/embedder.hpp"
#include "novelty/util/error.hpp"
#include "util/message_text.hpp"

#include <algorithm>
#include <utility>

namespace novelty {

RequestResolver::RequestResolver(const Corpus& corpus, ResolveOptions options, RowFilterCache* filters)
    : corpus_(corpus), options_(std::move(options)), filters_(filters) {
    if (!filters_) {
        own_filters_ = std::make_unique<RowFilterCache>(corpus_);
        filters_ = own_filters_.get();
    }
}

namespace {

/// The text BM25 reads of record `r`: its own, else the corpus paper's at `row`; "" for neither.
std::string text_of(const Corpus& corpus, const QueryRecord& r, const std::optional<std::size_t>& row) {
    if (r.has_text()) return embedding_text(r.title, r.text);
    if (!row) return {};
    const Paper p = corpus.paper(*row);
    return embedding_text(p.title, p.abstract);
}

std::string no_source_problem(const QueryRecord& r, const RecordOrigin& origin) {
    const std::string what = origin.file.empty() ? quote_value(r.id) : "query " + quote_value(r.id);
    return what + " has no text and is not the id of a corpus paper" + origin.hint;
}

}  // namespace

ResolvedBatch RequestResolver::resolve(RecordBatch batch) {
    const std::size_t n = batch.size(), dim = corpus_.manifest().dim;
    if (options_.vectors) corpus_.vectors();  // a corpus without vectors is refused before any record
    if (batch.dim != 0 && batch.dim != dim)
        throw UsageError("the vectors have dimension " + std::to_string(batch.dim) + " but the corpus has " +
                         std::to_string(dim));
    ResolvedBatch out;
    out.dim = dim;
    out.origin = batch.origin;
    if (options_.vectors) out.vectors.assign(n * dim, 0.0f);
    ScopeResolver scopes(corpus_, options_.cutoff, options_.exclude);
    bool any_filter = false;
    for (std::size_t i = 0; i < n; ++i) {
        const QueryRecord& r = batch.records[i];
        const bool given = batch.given_vector(i);
        const std::optional<std::size_t> row =
            batch.own_papers && !r.has_text() && !(given && !options_.texts) ? corpus_.find_row(r.id) : std::nullopt;
        const bool needs_source = (options_.vectors && !given) || options_.texts;
        if (needs_source && !r.has_text() && !row) batch.origin.fail(i, r.line, no_source_problem(r, batch.origin));
        if (options_.vectors) {
            float* v = out.vectors.data() + i * dim;
            if (given) std::copy_n(batch.given.data() + i * dim, dim, v);
            else if (r.has_text()) out.to_embed.push_back(i);
            else corpus_.vectors().row_as_f32(*row, v);
        }
        if (options_.texts) out.texts.push_back(text_of(corpus_, r, row));
        out.scopes.push_back(scopes.resolve(r.id, r.date, r.exclude, batch.own_papers));
        out.filters.push_back(filters_->rows(options_.filter, r.filter));
        any_filter = any_filter || out.filters.back();
    }
    if (!any_filter) out.filters.clear();
    out.records = std::move(batch.records);
    return out;
}

void ResolvedBatch::append(const ResolvedBatch& other) {
    if (!other.filters.empty() || !filters.empty()) {
        filters.resize(size());
        if (other.filters.empty()) filters.resize(size() + other.size());
        else filters.insert(filters.end(), other.filters.begin(), other.filters.end());
    }
    records.insert(records.end(), other.records.begin(), other.records.end());
    vectors.insert(vectors.end(), other.vectors.begin(), other.vectors.end());
    scopes.insert(scopes.end(), other.scopes.begin(), other.scopes.end());
    texts.insert(texts.end(), other.texts.begin(), other.texts.end());
}

SearchQueries ResolvedBatch::queries(std::size_t begin, std::size_t end) const {
    SearchQueries q;
    q.vectors = vectors.empty() ? nullptr : vectors.data() + begin * dim;
    q.n_queries = vectors.empty() ? 0 : end - begin;
    q.dim = dim;
    for (std::size_t i = begin; i < end; ++i) {
        q.scope.row_limit.push_back(scopes[i].row_limit);
        q.scope.excluded.add(scopes[i].excluded_rows);
        if (!filters.empty()) q.scope.filters.push_back(filters[i]);
    }
    return q;
}

ScoreInput ResolvedBatch::score_input(const std::vector<std::size_t>& which, std::vector<float>& rows) const {
    ScoreInput batch;
    batch.dim = dim;
    rows.clear();
    bool any_filter = false;
    for (std::size_t i : which) {
        rows.insert(rows.end(), vectors.begin() + i * dim, vectors.begin() + (i + 1) * dim);
        batch.row_limit.push_back(scopes[i].row_limit);
        batch.excluded.add(scopes[i].excluded_rows);
        if (!filters.empty()) {
            batch.filters.push_back(filters[i]);
            any_filter = any_filter || filters[i];
        }
    }
    if (!any_filter) batch.filters.clear();
    batch.vectors = rows.data();
    batch.n_ideas = which.size();
    return batch;
}

std::vector<std::string> ResolvedBatch::reach_problems(std::size_t corpus_rows, std::size_t p, std::size_t q) const {
    std::vector<std::string> problems;
    problems.reserve(size());
    for (const RecordScope& scope : scopes) problems.push_back(scope_reach_problem(scope, corpus_rows, p, q));
    return problems;
}

void ResolvedBatch::check_reach(std::size_t corpus_rows, std::size_t p, std::size_t q, const std::string& advice) const {
    for (std::size_t i = 0; i < size(); ++i) {
        const std::string problem = scope_reach_problem(scopes[i], corpus_rows, p, q);
        if (problem.empty()) continue;
        const std::string what = origin.file.empty() ? "" : "idea " + quote_value(records[i].id) + ": ";
        origin.fail(i, records[i].line, what + problem + (advice.empty() ? "" : "; " + advice));
    }
}

void embed_records(const std::vector<QueryRecord>& records, const std::vector<std::size_t>& which, const EmbedTexts& embed,
                   const EmbedSettings& settings, std::vector<float>& vectors, std::size_t& dim,
                   const std::string& dim_owner) {
    const std::size_t chunk = std::max<std::size_t>(1, settings.chunk);
    std::vector<std::string> texts;
    for (std::size_t begin = 0; begin < which.size(); begin += chunk) {
        const std::size_t end = std::min(which.size(), begin + chunk);
        texts.clear();
        for (std::size_t j = begin; j < end; ++j) texts.push_back(embedding_text(records[which[j]].title, records[which[j]].text));
        const std::vector<float> made = embed(texts);
        if (dim == 0 && !made.empty() && made.size() % texts.size() == 0) {
            dim = made.size() / texts.size();
            vectors.assign(records.size() * dim, 0.0f);
        }
        if (made.size() != texts.size() * dim)
            throw UsageError("the encoder" + (settings.encoder.empty() ? "" : " " + quote_value(settings.encoder)) +
                             " makes vectors of dimension " + std::to_string(made.size() / texts.size()) + " but " +
                             dim_owner + " has " + std::to_string(dim));
        for (std::size_t j = begin; j < end; ++j)
            std::copy(made.begin() + (j - begin) * dim, made.begin() + (j - begin + 1) * dim, vectors.begin() + which[j] * dim);
        if (settings.progress) settings.progress(end, which.size());
    }
}

void embed_pending(ResolvedBatch& batch, const EmbedTexts& embed, const EmbedSettings& settings) {
    if (batch.to_embed.empty()) return;
    embed_records(batch.records, batch.to_embed, embed, settings, batch.vectors, batch.dim);
    batch.to_embed.clear();
    batch.embedded_precision = settings.precision;
}

}  // namespace novelty
