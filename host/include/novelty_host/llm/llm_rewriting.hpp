// The LLM side of a retrieval with query rewriting (`novelty retrieve --expand N / --hyde N
// --llm URL`, novelty.retrieve(expand=, hyde=, llm=) in Python): one chat client and a rewriter
// per mode, and one batch of queries' rewrites at a time with every request of the batch in
// flight together. The rewrites feed RetrievalRanker (novelty/request/retrieval_run.hpp).
#pragma once

#include "novelty/request/retrieval_run.hpp"
#include "novelty_host/claimnov/claims_setup.hpp"
#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/llm/llm_rewriter.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace novelty::host {

/// The rewriters of a run: a chat client and one LlmRewriter per mode asked for.
class LlmRewriting {
public:
    /// Opens the client for the LLM at `url` ("" = $NOVELTY_LLM_BASE_URL) with `model` and the
    /// key, concurrency, timeout, retries, answer length and response cache of `settings`
    /// (make_chat_client; its `llm`, judge and judge fields are not read). UsageError for a
    /// missing URL, or a missing model that the server's /models does not settle. One rewriter
    /// per mode of `modes` (retrieval_modes): expansion asks for questions, or for one
    /// continuation when the mode appends; HyDE for hypothetical abstracts.
    LlmRewriting(const ClaimsLlmSettings& settings, const std::string& url, const std::string& model,
                 const std::vector<RewriteMode>& modes);
    ~LlmRewriting();

    /// Called for each query whose rewriting failed in a mode: its id, "expansion" or "HyDE",
    /// and the error.
    using FailureFn = std::function<void(const std::string& id, const std::string& mode, const std::string& error)>;

    /// Rewrites texts[begin, end) (one per query, keyed by ids[i]) in every mode, all requests
    /// submitted before any is awaited. A failed query's list is empty and its error is set
    /// (expand_error / hyde_error), and `on_failure` (when set) is told.
    RewritesById rewrite(const std::vector<std::string>& ids, const std::vector<std::string>& texts, std::size_t begin,
                         std::size_t end, const FailureFn& on_failure = {});

    /// "llm:<model>".
    std::string name() const;
    /// Queries whose rewriting failed so far, over all modes.
    std::size_t failures() const { return failures_; }
    /// One line per stage of the client's usage (calls, cache hits, failures, tokens).
    std::string usage() const;

private:
    std::unique_ptr<ChatClient> client_;
    std::unique_ptr<LlmRewriter> expand_, hyde_;
    std::size_t n_expand_ = 0, n_hyde_ = 0;
    std::size_t failures_ = 0;
};

}  // namespace novelty::host
