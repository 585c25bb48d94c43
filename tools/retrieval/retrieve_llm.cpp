#include "retrieve_llm.hpp"

#include "cli_common.hpp"

#include <cstdio>

namespace novelty::cli {

namespace {

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

std::unique_ptr<host::LlmRewriting> open_llm_rewriting(const RetrieveLlmFlags& flags, const std::string& corpus_dir,
                                                       const std::vector<RewriteMode>& modes) {
    host::ClaimsLlmSettings settings;
    settings.llm_key = flags.key;
    settings.concurrency = flags.concurrency;
    settings.concurrency_given = flags.concurrency_given;
    settings.timeout_seconds = flags.timeout;
    settings.retries = flags.retries;
    settings.max_tokens = flags.max_tokens;
    settings.response_cache = response_cache(flags, corpus_dir);
    return std::make_unique<host::LlmRewriting>(settings, flags.url == "env" ? "" : flags.url, flags.model, modes);
}

}  // namespace novelty::cli
