// The LLM flags of `novelty retrieve --expand N / --hyde N --llm URL` (named as in `novelty
// claims`) and the rewriting they open (novelty::host::LlmRewriting, shared with the Python package).
#pragma once

#include "novelty/request/retrieval_run.hpp"
#include "novelty_host/llm/llm_rewriting.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace novelty::cli {

/// --llm and its companions; defaults as in `novelty claims`.
struct RetrieveLlmFlags {
    std::string url;          ///< "" = no LLM; "env" = $NOVELTY_LLM_BASE_URL
    std::string model;        ///< "" = $NOVELTY_LLM_MODEL
    std::string key;          ///< "" = $NOVELTY_LLM_API_KEY, else $OPENAI_API_KEY
    std::size_t concurrency = 8;
    bool concurrency_given = false;
    double timeout = 120;
    int retries = 5;
    int max_tokens = 0;       ///< per LLM answer; 0 = the server's default
    std::string cache;        ///< "" = CORPUS/cache/llm_responses.sqlite when writable; "none" = no cache
};

/// Adds --llm, --llm-model, --llm-key, --concurrency, --timeout, --retries, --max-tokens and --cache.
void add_retrieve_llm_flags(CLI::App& command, RetrieveLlmFlags& flags);

/// The rewriting of the flags' LLM for `modes`, its response cache the --cache file, none, or the
/// corpus's cache directory when writable (a warning on stderr when it is not).
std::unique_ptr<host::LlmRewriting> open_llm_rewriting(const RetrieveLlmFlags& flags, const std::string& corpus_dir,
                                                       const std::vector<RewriteMode>& modes);

}  // namespace novelty::cli
