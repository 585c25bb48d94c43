// The LLM side of `novelty retrieve --expand N / --hyde N --llm URL`: the flags (named as in
// `novelty claims`), the chat client, and one batch of queries' rewrites at a time with every
// request of the batch in flight together.
#pragma once

#include "rewrites_file.hpp"

#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/llm/llm_rewriter.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <map>
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

/// The rewriters of a run: a chat client and one LlmRewriter per mode asked for.
class LlmRewriting {
public:
    /// Opens the client (UsageError for a missing URL, or a missing model that the server's
    /// /models does not settle). `n_expand` / `n_hyde`: texts per query for each mode (0 = that
    /// mode is off); `expand_single`: expansion asks for one continuation instead of questions.
    LlmRewriting(const RetrieveLlmFlags& flags, const std::string& corpus_dir, std::size_t n_expand, std::size_t n_hyde,
                 bool expand_single = false);

    /// Rewrites texts[begin, end) (one per query, keyed by ids[i]) in every mode, all requests
    /// submitted before any is awaited. A failed query's list is empty and its error is set
    /// (expand_error / hyde_error); it is also noted on stderr unless `quiet`.
    std::map<std::string, QueryRewrites> rewrite(const std::vector<std::string>& ids, const std::vector<std::string>& texts,
                                                 std::size_t begin, std::size_t end, bool quiet);

    /// "llm:<model>".
    std::string name() const;
    /// Queries whose rewriting failed so far, over all modes.
    std::size_t failures() const { return failures_; }
    /// One stderr line per stage of the client's usage (calls, cache hits, failures, tokens).
    void print_usage() const;

private:
    std::unique_ptr<host::ChatClient> client_;
    std::unique_ptr<host::LlmRewriter> expand_, hyde_;
    std::size_t n_expand_ = 0, n_hyde_ = 0;
    std::size_t failures_ = 0;
};

}  // namespace novelty::cli
