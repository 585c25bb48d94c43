// novelty._core.retrieve: dense, BM25 and hybrid (reciprocal-rank fusion) rankings under a
// per-query cutoff, and their fusion over query rewrites (from an LLM or a rewrites file), through
// the request layer's RetrievalRanker and the host's LlmRewriting, as `novelty retrieve` computes
// them. Returns the JSON Lines records the CLI writes.
#include "bindings.hpp"

#include "novelty/request/retrieval_run.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/llm/llm_rewriting.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>

namespace novelty::python {

namespace {

/// Where the rewrites come from: a rewrites file, or an LLM (the settings of `novelty retrieve`'s
/// --llm flags; cache "" = no response cache).
struct RewriteSource {
    std::string rewrites_file;
    std::string llm, llm_model, llm_key, cache;
    std::size_t concurrency = 8;
    double timeout = 120;
    int retries = 5;
    int max_tokens = 0;
};

RewritesById rewrites_of(const RewriteSource& source, const std::vector<std::string>& ids, const std::vector<std::string>& texts,
                         const std::vector<RewriteMode>& modes) {
    if (modes.empty()) return {};
    if (!source.rewrites_file.empty()) return read_rewrites_file(source.rewrites_file);
    host::ClaimsLlmSettings settings;
    settings.llm_key = source.llm_key;
    settings.concurrency = source.concurrency;
    settings.concurrency_given = true;
    settings.timeout_seconds = source.timeout;
    settings.retries = source.retries;
    settings.max_tokens = source.max_tokens;
    settings.response_cache = source.cache;
    host::LlmRewriting llm(settings, source.llm == "env" ? "" : source.llm, source.llm_model, modes);
    // Failures are reported in the records ("rewrite_errors"), not on stderr.
    return llm.rewrite(ids, texts, 0, ids.size());
}

/// The records, one JSON line per query (the engine's work, without the GIL).
std::vector<std::string> retrieve_lines(IndexHandle& h, EmbedderHandle* embedder, const ResolvedHandle& q,
                                        const RetrievalSettings& settings, const RewriteSource& source) {
    const std::vector<RewriteMode> modes = retrieval_modes(settings);
    if (!modes.empty() && source.rewrites_file.empty() && source.llm.empty())
        throw UsageError("expand and hyde need rewrites: llm (an OpenAI-compatible server) or rewrites (a file)", "llm");
    RetrievalRanker ranker(
        *h.corpus, settings, modes,
        [&h](const SearchQueries& s, std::size_t depth) {
            std::lock_guard<CallLock> lock(h.mutex);
            return dense_rankings(*h.index, s, depth);
        },
        [embedder](const std::vector<std::string>& texts) {
            if (!embedder) throw UsageError("rewrites ranked densely need an encoder", "embedder");
            std::lock_guard<CallLock> lock(embedder->mutex);
            return embedder->embedder->embed(texts);
        },
        // BM25 reads through the corpus's own connection, which the handle's other calls use too.
        [&h](const std::function<void()>& use) {
            std::lock_guard<CallLock> lock(*h.corpus_lock);
            use();
        });
    std::vector<std::string> ids;
    for (const auto& record : q.batch.records) ids.push_back(record.id);
    std::vector<std::string> texts = q.batch.texts;
    texts.resize(ids.size());
    const RewritesById rewrites = rewrites_of(source, ids, texts, modes);
    const std::vector<RankingsByTag> ranked = ranker.rank(RetrievalBatch{ids, texts, resolved_queries(q, nullptr)}, rewrites);
    const std::vector<std::string> tags = ranker.tags();
    std::vector<std::string> lines;
    std::lock_guard<CallLock> lock(*h.corpus_lock);
    for (std::size_t i = 0; i < ids.size(); ++i)
        lines.push_back(retrieval_record_json(*h.corpus, ids[i], q.batch.scopes[i].cutoff, q.batch.scopes[i].row_limit,
                                              ranked[i], tags, modes, rewrites));
    return lines;
}

std::vector<std::string> retrieve_py(IndexHandle& h, EmbedderHandle* embedder, const ResolvedHandle& q,
                                     const RetrievalSettings& settings, const RewriteSource& source) {
    if (q.corpus != h.corpus) throw UsageError("the queries were resolved against another corpus", "queries");
    nb::gil_scoped_release release;
    return retrieve_lines(h, embedder, q, settings, source);
}

}  // namespace

void bind_retrieve(nb::module_& m) {
    m.def("retrieve",
          [](IndexHandle& h, EmbedderHandle* embedder, const ResolvedHandle& queries, std::vector<std::string> methods, std::size_t k,
             std::size_t fusion_depth, std::size_t expand, std::string expand_mode, std::size_t hyde,
             bool fuse_original, std::string rewrites, std::string llm, std::string llm_model, std::string llm_key,
             std::size_t concurrency, double timeout, int retries, int max_tokens, std::string cache) {
              RetrievalSettings s{std::move(methods), k, fusion_depth, expand, std::move(expand_mode), hyde, fuse_original};
              RewriteSource source{std::move(rewrites), std::move(llm), std::move(llm_model), std::move(llm_key),
                                   std::move(cache), concurrency, timeout, retries, max_tokens};
              return retrieve_py(h, embedder, queries, s, source);
          },
          nb::arg("index"), nb::arg("embedder").none(), nb::arg("queries"), nb::arg("methods"), nb::arg("k"),
          nb::arg("fusion_depth"), nb::arg("expand"), nb::arg("expand_mode"), nb::arg("hyde"),
          nb::arg("fuse_original"), nb::arg("rewrites"), nb::arg("llm"), nb::arg("llm_model"), nb::arg("llm_key"),
          nb::arg("concurrency"), nb::arg("timeout"), nb::arg("retries"), nb::arg("max_tokens"), nb::arg("cache"),
          "One JSON line per query, as `novelty retrieve --jsonl` writes it: the rankings by tag (each method, "
          "then each method with each rewrite mode), best first, and the rewrites used.");
}

}  // namespace novelty::python
