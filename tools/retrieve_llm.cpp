#include "retrieve_llm.hpp"

#include "cli_common.hpp"

#include "novelty_host/claimnov/claims_setup.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>

namespace novelty::cli {

namespace {

namespace fs = std::filesystem;

/// The response cache file: --cache, none, or the corpus's cache directory when writable.
std::string response_cache(const RetrieveLlmFlags& flags, const std::string& corpus_dir) {
    if (flags.cache == "none") return "";
    if (!flags.cache.empty()) return flags.cache;
    const std::string dir = corpus_dir + "/cache";
    if (writable_dir(dir)) return dir + "/llm_responses.sqlite";
    std::fprintf(stderr, "novelty: warning: %s is read-only; LLM answers are not cached (give --cache PATH)\n", dir.c_str());
    return "";
}

}  // namespace

void add_retrieve_llm_flags(CLI::App& cmd, RetrieveLlmFlags& flags) {
    cmd.add_option("--llm", flags.url,
                   "Make the --expand / --hyde rewrites with an OpenAI-compatible LLM: its base URL "
                   "(http://host:8000/v1), or 'env' for $NOVELTY_LLM_BASE_URL (instead of --rewrites)");
    cmd.add_option("--llm-model", flags.model,
                   "Model name (default: $NOVELTY_LLM_MODEL, else the server's model when /models lists exactly one)");
    cmd.add_option("--llm-key", flags.key, "API key (default: $NOVELTY_LLM_API_KEY, else $OPENAI_API_KEY)");
    cmd.add_option("--concurrency", flags.concurrency, "LLM requests in flight at most (default 8, or $NOVELTY_LLM_CONCURRENCY)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
        ->each([&flags](const std::string&) { flags.concurrency_given = true; });
    cmd.add_option("--timeout", flags.timeout, "Seconds per LLM attempt (default 120)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--retries", flags.retries, "Retries per LLM call after the first attempt (default 5)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--max-tokens", flags.max_tokens,
                   "Most tokens per LLM answer (default 0: the server's default); a cut answer gets the one repair")
        ->check(CLI::Range(0, 1 << 20));
    cmd.add_option("--cache", flags.cache,
                   "LLM response cache (SQLite); default CORPUS/cache/llm_responses.sqlite; 'none' for no cache");
}

LlmRewriting::LlmRewriting(const RetrieveLlmFlags& flags, const std::string& corpus_dir, std::size_t n_expand,
                           std::size_t n_hyde, bool expand_single)
    : n_expand_(n_expand), n_hyde_(n_hyde) {
    host::ClaimsLlmSettings settings;
    settings.llm_key = flags.key;
    settings.concurrency = flags.concurrency;
    settings.concurrency_given = flags.concurrency_given;
    settings.timeout_seconds = flags.timeout;
    settings.retries = flags.retries;
    settings.max_tokens = flags.max_tokens;
    settings.response_cache = response_cache(flags, corpus_dir);
    client_ = host::make_chat_client(settings, flags.url == "env" ? "" : flags.url, flags.model);
    if (n_expand_ > 0)
        expand_ = std::make_unique<host::LlmRewriter>(
            *client_, expand_single ? host::RewriteKind::continue_ : host::RewriteKind::expand);
    if (n_hyde_ > 0) hyde_ = std::make_unique<host::LlmRewriter>(*client_, host::RewriteKind::hyde);
}

std::map<std::string, QueryRewrites> LlmRewriting::rewrite(const std::vector<std::string>& ids,
                                                           const std::vector<std::string>& texts, std::size_t begin,
                                                           std::size_t end, bool quiet) {
    const std::vector<std::string> batch(texts.begin() + static_cast<std::ptrdiff_t>(begin),
                                         texts.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<std::future<host::RewriteResult>> expanded, hyde;
    if (expand_) expanded = expand_->submit_all(batch, n_expand_);
    if (hyde_) hyde = hyde_->submit_all(batch, n_hyde_);
    std::map<std::string, QueryRewrites> out;
    const auto take = [&](std::future<host::RewriteResult>& f, const std::string& id, const char* mode,
                          std::vector<std::string>& list, std::string& error) {
        host::RewriteResult r = f.get();
        if (r.ok()) {
            list = std::move(r.texts);
            return;
        }
        error = r.error;
        ++failures_;
        if (!quiet)
            std::fprintf(stderr, "novelty: note: query '%s': LLM %s failed (%s); it uses the query text alone\n",
                         id.c_str(), mode, error.c_str());
    };
    for (std::size_t i = 0; i < batch.size(); ++i) {
        QueryRewrites& q = out[ids[begin + i]];
        if (expand_) take(expanded[i], ids[begin + i], "expansion", q.expand, q.expand_error);
        if (hyde_) take(hyde[i], ids[begin + i], "HyDE", q.hyde, q.hyde_error);
    }
    return out;
}

std::string LlmRewriting::name() const { return "llm:" + client_->options().model; }

void LlmRewriting::print_usage() const {
    std::fputs(host::usage_report(*client_).c_str(), stderr);
}

}  // namespace novelty::cli
