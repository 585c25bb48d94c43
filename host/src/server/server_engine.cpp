#include "server/server_engine.hpp"

#include "server/server_requests.hpp"

#include "novelty/corpus/paper_filter.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/util/error.hpp"
#include "novelty/request/resolver.hpp"
#include "novelty/request/result_json.hpp"
#include "novelty/request/score_run.hpp"
#include "novelty/request/scope.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty_host/llm/batcher.hpp"

#include <algorithm>
#include <map>
#include <mutex>

namespace novelty::host {

namespace {

struct ScoreItem {
    ResolvedBatch records;
    std::size_t p = 0, q = 0;
};

struct SearchItem {
    ResolvedBatch records;
    std::size_t k = 0;
};

struct EmbedReply {
    std::vector<float> values;  ///< texts x dim
    std::string embedder;
    std::string precision;  ///< the built-in encoder's (Embedder::precision), "" for a server
};

using Texts = std::vector<std::string>;
using Replies = std::vector<std::string>;  ///< one JSON object per record

std::string results_body(const std::vector<std::string>& objects) {
    std::string body = "{\"results\":[";
    for (std::size_t i = 0; i < objects.size(); ++i) {
        if (i > 0) body += ',';
        body += objects[i];
    }
    return body + "]}";
}

constexpr std::size_t max_scorers = 8;
constexpr std::size_t max_rankers = 8;

/// `base` (every row when null) with the rows before `begin` denied too.
std::shared_ptr<const RowFilter> from_row(const std::shared_ptr<const RowFilter>& base, std::size_t begin,
                                          std::size_t n_rows) {
    RowFilter f;
    if (base) {
        f = *base;
    } else {
        f.n_rows = n_rows;
        f.words.assign((n_rows + 63) / 64, ~std::uint64_t(0));
        if (n_rows % 64 != 0) f.words.back() = (std::uint64_t(1) << (n_rows % 64)) - 1;
    }
    for (std::size_t row = 0; row < std::min(begin, n_rows); ++row) f.deny(row);
    return std::make_shared<const RowFilter>(std::move(f));
}

/// The methods of a /v1/retrieve body: a list of names or one comma-separated string; the
/// default is all three. Names are checked by retrieval_modes().
std::vector<std::string> parse_methods(const nlohmann::json& body) {
    auto v = body.find("methods");
    if (v == body.end() || v->is_null()) return {"dense", "bm25", "hybrid"};
    std::vector<std::string> methods;
    const auto add_names = [&](const std::string& list) {
        std::size_t start = 0;
        while (start <= list.size()) {
            const std::size_t comma = std::min(list.find(',', start), list.size());
            const std::string name = list.substr(start, comma - start);
            if (!name.empty()) methods.push_back(name);
            start = comma + 1;
        }
    };
    if (v->is_string()) {
        add_names(v->get<std::string>());
    } else if (v->is_array()) {
        for (const auto& m : *v) {
            if (!m.is_string()) throw UsageError("methods: must hold method names (strings)", "methods");
            methods.push_back(m.get<std::string>());
        }
    } else {
        throw UsageError("methods: must be a list of method names, such as [\"dense\", \"bm25\", \"hybrid\"]", "methods");
    }
    if (methods.empty()) throw UsageError("methods: name at least one of dense, bm25, hybrid", "methods");
    return methods;
}

}  // namespace

struct ServerEngine::Impl {
    ServerOptions options;
    std::unique_ptr<SearchBackend> backend;
    Corpus corpus;
    std::unique_ptr<SearchIndex> index;  ///< the corpus loaded once; every request searches it
    std::size_t dim = 0;
    std::size_t max_k = 0;

    std::mutex engine_mutex;  ///< corpus lookups, the index, the scorers and the filter cache
    std::unique_ptr<RowFilterCache> filter_masks;  ///< the masks of recent requests' filters
    std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<Scorer>> scorers;
    std::unique_ptr<Embedder> embedder;  ///< made on first use by the embed worker
    /// Rankers of recent retrieval settings (methods, k, fusion depth), each with its BM25 index.
    std::map<std::string, std::unique_ptr<RetrievalRanker>> rankers;

    std::unique_ptr<Batcher<Texts, EmbedReply>> embed_batcher;
    std::unique_ptr<Batcher<ScoreItem, Replies>> score_batcher;
    std::unique_ptr<Batcher<SearchItem, Replies>> search_batcher;

    explicit Impl(const ServerOptions& given)
        : options(given),
          backend(make_backend(given.backend)),
          corpus(Corpus::open(given.corpus_dir)) {
        if (!corpus.has_vectors())
            throw CorpusError(corpus.dir() + ": the corpus has no vectors yet (run 'novelty corpus embed' or "
                                             "'novelty corpus add-vectors')");
        backend->tuning.threads = options.threads;
        index = backend->build(VectorView::of(corpus.vectors()));
        filter_masks = std::make_unique<RowFilterCache>(corpus);
        dim = corpus.manifest().dim;
        max_k = std::min(options.max_k, SearchBackend::max_k);
        const BatcherOptions batching{options.max_batch, options.max_wait};
        embed_batcher = std::make_unique<Batcher<Texts, EmbedReply>>(
            [this](std::vector<Texts>& batch) { return embed_batch(batch); }, batching,
            [](const Texts& texts) { return texts.size(); });
        score_batcher = std::make_unique<Batcher<ScoreItem, Replies>>(
            [this](std::vector<ScoreItem>& batch) { return score_batch(batch); }, batching,
            [](const ScoreItem& item) { return item.records.size(); });
        search_batcher = std::make_unique<Batcher<SearchItem, Replies>>(
            [this](std::vector<SearchItem>& batch) { return search_batch(batch); }, batching,
            [](const SearchItem& item) { return item.records.size(); });
    }

    RequestLimits limits() const { return RequestLimits{options.max_records, options.max_text_bytes}; }

    // --- resolving records (request threads) ------------------------------------------------

    /// The records resolved by the request layer under the engine lock, their texts embedded by
    /// the embed batcher outside it. `needs` carries the request's cutoff and filter.
    ResolvedBatch resolve(RecordBatch records, const ResolveOptions& needs) {
        ResolvedBatch out;
        {
            std::lock_guard lock(engine_mutex);
            out = RequestResolver(corpus, needs, filter_masks.get()).resolve(std::move(records));
        }
        if (out.to_embed.empty()) return out;
        const std::string where = out.origin.key + "[" + std::to_string(out.to_embed[0]) + "]";
        if (!options.make_embedder)
            throw UsageError(where + ": has text, but this server has no encoder for text; send \"vector\" instead", where);
        EmbedSettings settings;
        settings.chunk = out.to_embed.size();  // one submission: the batcher groups requests
        embed_pending(out, [this, &settings](const std::vector<std::string>& texts) {
            EmbedReply embedded = embed_batcher->submit(Texts(texts)).get();
            settings.encoder = embedded.embedder;
            settings.precision = embedded.precision;
            return std::move(embedded.values);
        }, settings);
        return out;
    }

    // --- batch backends (batcher workers) -----------------------------------------------------

    std::vector<EmbedReply> embed_batch(std::vector<Texts>& batch) {
        if (!embedder) {
            try {
                embedder = options.make_embedder();
            } catch (const std::exception& e) {
                throw Error(std::string("the server cannot embed text: ") + e.what());
            }
        }
        Texts all;
        for (const auto& texts : batch) all.insert(all.end(), texts.begin(), texts.end());
        const std::vector<float> values = embedder->embed(all);
        const std::size_t out_dim = all.empty() ? 0 : values.size() / all.size();
        std::vector<EmbedReply> replies(batch.size());
        std::size_t offset = 0;
        for (std::size_t b = 0; b < batch.size(); ++b) {
            const std::size_t n = batch[b].size();
            replies[b].values.assign(values.begin() + offset * out_dim, values.begin() + (offset + n) * out_dim);
            replies[b].embedder = embedder->name();
            replies[b].precision = embedder->precision();
            offset += n;
        }
        return replies;
    }

    /// The run of a request's p and q (the server's options for the rest; nothing is written to
    /// the read-only corpus).
    ScoreRun run_for(std::size_t p, std::size_t q) const {
        ScoreRunSettings settings;
        settings.p = p;
        settings.q = q;
        settings.include_self = options.include_self;
        settings.evidence = options.evidence;
        settings.write_cache = false;
        return score_run(corpus, settings, backend->label());
    }

    Scorer& scorer_for(std::size_t p, std::size_t q) {
        const auto key = std::make_pair(p, q);
        auto it = scorers.find(key);
        if (it != scorers.end()) return *it->second;
        if (scorers.size() >= max_scorers) scorers.erase(scorers.begin());
        return *scorers.emplace(key, std::make_unique<Scorer>(corpus, *index, run_for(p, q).options)).first->second;
    }

    std::vector<Replies> score_batch(std::vector<ScoreItem>& batch) {
        std::lock_guard lock(engine_mutex);
        std::vector<Replies> replies(batch.size());
        std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>> groups;
        for (std::size_t b = 0; b < batch.size(); ++b) groups[{batch[b].p, batch[b].q}].push_back(b);
        for (const auto& [pq, members] : groups) {
            std::vector<float> vectors;
            ResolvedBatch group;
            group.dim = dim;
            for (std::size_t b : members) group.append(batch[b].records);
            std::vector<std::size_t> all(group.size());
            for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
            const ScoreInput input = group.score_input(all, vectors);
            const std::vector<IdeaScore> scores = scorer_for(pq.first, pq.second).score(input);
            ScoreReportContext context = run_for(pq.first, pq.second).report;
            std::size_t t = 0;
            for (std::size_t b : members) {
                const ResolvedBatch& r = batch[b].records;
                context.ideas_precision = r.embedded_precision;  // per request: "" when it sent vectors
                for (std::size_t i = 0; i < r.size(); ++i, ++t)
                    replies[b].push_back(score_result_json(corpus, context, r.records[i].id, scores[t], r.scopes[i].cutoff,
                                                           r.scopes[i].excluded_ids));
            }
        }
        return replies;
    }

    std::vector<Replies> search_batch(std::vector<SearchItem>& batch) {
        std::lock_guard lock(engine_mutex);
        ResolvedBatch all;
        all.dim = dim;
        std::size_t k = 1;
        for (const auto& item : batch) {
            all.append(item.records);
            k = std::max(k, item.k);
        }
        const SearchQueries queries = all.queries();
        // One search at the largest k; a query's top-k is the prefix of its top-K.
        const TopK top = index->search(queries, k);
        const PaperLabels labels = corpus.labels(top.rows);
        std::vector<Replies> replies(batch.size());
        std::size_t t = 0;
        for (std::size_t b = 0; b < batch.size(); ++b) {
            const ResolvedBatch& r = batch[b].records;
            for (std::size_t i = 0; i < r.size(); ++i, ++t) {
                std::string line;
                append_search_result_json(line, labels, r.records[i].id, top, t, r.scopes[i].cutoff, r.scopes[i].row_limit,
                                          batch[b].k);
                replies[b].push_back(std::move(line));
            }
        }
        return replies;
    }

    // --- retrieval (request threads, under the engine lock) ------------------------------------

    RetrievalRanker& ranker_for(const RetrievalSettings& settings) {
        std::string key = std::to_string(settings.k) + "/" + std::to_string(settings.fusion_depth);
        for (const auto& m : settings.methods) key += "/" + m;
        auto it = rankers.find(key);
        if (it != rankers.end()) return *it->second;
        if (rankers.size() >= max_rankers) rankers.erase(rankers.begin());
        auto ranker = std::make_unique<RetrievalRanker>(
            corpus, settings, std::vector<RewriteMode>{},
            [this](const SearchQueries& q, std::size_t depth) { return dense_rankings(*index, q, depth); },
            [](const std::vector<std::string>&) -> std::vector<float> {
                throw UsageError("the server does not rewrite queries");
            });
        return *rankers.emplace(key, std::move(ranker)).first->second;
    }

    RetrievalReply rank(const RetrievalRequest& request) {
        if (!retrieval_modes(request.settings).empty())
            throw UsageError("the server does not rewrite queries (expand, hyde): use novelty retrieve or Python");
        bool need_dense = false, need_text = false;
        for (const auto& m : request.settings.methods) {
            need_dense = need_dense || m != "bm25";
            need_text = need_text || m != "dense";
        }
        ResolveOptions needs;
        needs.cutoff = request.cutoff;
        needs.filter = request.filter;
        needs.vectors = need_dense;
        needs.texts = need_text;
        RecordBatch records = request.records;
        records.origin.key = request.key;
        ResolvedBatch r = resolve(std::move(records), needs);
        std::lock_guard lock(engine_mutex);
        if (request.exclude_through) {
            const std::size_t begin = corpus.rows_through(*request.exclude_through);
            r.filters.resize(r.size());
            for (auto& f : r.filters) f = from_row(f, begin, corpus.size());
        }
        if (r.texts.empty()) r.texts.resize(r.size());
        std::vector<std::string> ids;
        for (const QueryRecord& record : r.records) ids.push_back(record.id);
        RetrievalRanker& ranker = ranker_for(request.settings);
        RetrievalReply reply;
        reply.rankings = ranker.rank(RetrievalBatch{ids, r.texts, r.queries()}, {});
        reply.scopes = std::move(r.scopes);
        reply.tags = ranker.tags();
        return reply;
    }
};

ServerEngine::ServerEngine(const ServerOptions& options) : impl_(std::make_unique<Impl>(options)) {}

ServerEngine::~ServerEngine() { stop(); }

namespace {

/// The request's cutoff and filter, with what its records need.
ResolveOptions request_needs(const nlohmann::json& body) {
    ResolveOptions needs;
    needs.cutoff = parse_date_field(body, "cutoff");
    needs.filter = parse_filter_field(body, "filter");
    return needs;
}

}  // namespace

std::string ServerEngine::score(const nlohmann::json& body) {
    Impl& s = *impl_;
    refuse_unknown_keys(body, {"ideas", "p", "q", "cutoff", "filter"});
    RecordBatch records = parse_records(body, "ideas", s.limits(), s.dim);
    const std::size_t p = parse_count(body, "p", s.options.default_p, s.max_k);
    const std::size_t q = parse_count(body, "q", s.options.default_q, s.max_k);
    ResolvedBatch resolved = s.resolve(std::move(records), request_needs(body));
    resolved.check_reach(s.corpus.size(), p, q, "lower p and q, or use a later date");
    return results_body(s.score_batcher->submit(ScoreItem{std::move(resolved), p, q}).get());
}

std::string ServerEngine::search(const nlohmann::json& body) {
    Impl& s = *impl_;
    refuse_unknown_keys(body, {"queries", "k", "cutoff", "filter"});
    RecordBatch records = parse_records(body, "queries", s.limits(), s.dim);
    const std::size_t k = parse_count(body, "k", s.options.default_k, s.max_k);
    ResolvedBatch resolved = s.resolve(std::move(records), request_needs(body));
    return results_body(s.search_batcher->submit(SearchItem{std::move(resolved), k}).get());
}

std::string ServerEngine::embed(const nlohmann::json& body) {
    Impl& s = *impl_;
    refuse_unknown_keys(body, {"records"});
    const std::vector<QueryRecord> records = parse_records(body, "records", s.limits(), s.dim).records;
    if (!s.options.make_embedder) throw UsageError("this server has no encoder for text (it was started without one)");
    Texts texts;
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (!records[i].has_text())
            throw UsageError("records[" + std::to_string(i) + "]: '" + records[i].id +
                                 "' has no \"title\" or \"text\" to embed",
                             "records[" + std::to_string(i) + "]");
        texts.push_back(embedding_text(records[i].title, records[i].text));
    }
    const EmbedReply embedded = s.embed_batcher->submit(std::move(texts)).get();
    const std::size_t out_dim = embedded.values.size() / records.size();
    nlohmann::ordered_json reply;
    reply["embedder"] = embedded.embedder;
    reply["dim"] = out_dim;
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < records.size(); ++i) {
        nlohmann::ordered_json vector = nlohmann::ordered_json::array();
        for (std::size_t c = 0; c < out_dim; ++c) vector.push_back(embedded.values[i * out_dim + c]);
        results.push_back({{"id", records[i].id}, {"vector", std::move(vector)}});
    }
    reply["results"] = std::move(results);
    return reply.dump();
}

std::string ServerEngine::retrieve(const nlohmann::json& body) {
    Impl& s = *impl_;
    refuse_unknown_keys(body, {"queries", "methods", "k", "fusion_depth", "cutoff", "filter"});
    RetrievalRequest request;
    request.records = parse_records(body, "queries", s.limits(), s.dim);
    request.settings.methods = parse_methods(body);
    request.settings.k = parse_count(body, "k", 100, s.max_k);
    request.settings.fusion_depth = parse_count(body, "fusion_depth", 1000, SearchBackend::max_k);
    request.cutoff = parse_date_field(body, "cutoff");
    request.filter = parse_filter_field(body, "filter");
    const RetrievalReply reply = rank(request);
    std::vector<std::string> lines;
    std::lock_guard lock(s.engine_mutex);
    for (std::size_t i = 0; i < request.records.size(); ++i)
        lines.push_back(retrieval_record_json(s.corpus, request.records.records[i].id, reply.scopes[i].cutoff,
                                              reply.scopes[i].row_limit, reply.rankings[i], reply.tags, {}, {}));
    return results_body(lines);
}

RetrievalReply ServerEngine::rank(const RetrievalRequest& request) { return impl_->rank(request); }

std::vector<Paper> ServerEngine::papers(const std::vector<std::int64_t>& rows) {
    std::lock_guard lock(impl_->engine_mutex);
    std::vector<Paper> out;
    out.reserve(rows.size());
    for (const std::int64_t row : rows) out.push_back(impl_->corpus.paper(static_cast<std::size_t>(row)));
    return out;
}

std::optional<std::size_t> ServerEngine::find_row(const std::string& id) {
    std::lock_guard lock(impl_->engine_mutex);
    return impl_->corpus.find_row(id);
}

std::vector<float> ServerEngine::vector(std::size_t row) {
    std::vector<float> out(impl_->dim);
    impl_->corpus.vectors().row_as_f32(row, out.data());
    return out;
}

std::string ServerEngine::embedder_name() const {
    const auto& e = impl_->corpus.manifest().embedder;
    return e ? e->name : std::string();
}

const Corpus& ServerEngine::corpus() const { return impl_->corpus; }

BatchCounts ServerEngine::batch_counts() const {
    BatchCounts c;
    c.score_calls = impl_->score_batcher->backend_calls();
    c.search_calls = impl_->search_batcher->backend_calls();
    c.embed_calls = impl_->embed_batcher->backend_calls();
    c.score_requests = impl_->score_batcher->requests_done();
    c.search_requests = impl_->search_batcher->requests_done();
    c.embed_requests = impl_->embed_batcher->requests_done();
    return c;
}

void ServerEngine::stop() {
    if (!impl_) return;
    impl_->score_batcher->stop();
    impl_->search_batcher->stop();
    impl_->embed_batcher->stop();
}

}  // namespace novelty::host
