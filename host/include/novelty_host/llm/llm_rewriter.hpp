// Query rewriting for retrieval through an OpenAI-compatible LLM (ChatClient), as ScholarCatalyst
// configures it: multi-query expansion (N augmented search questions), single-query expansion (one
// continuation to append to the question) and HyDE (N hypothetical abstracts of prior papers
// from distinct angles, without solving the question). One request per query asks for all N texts as one JSON object; many queries'
// requests are in flight at once (submit_all, then collect). docs/retrieval.md describes the use.
#pragma once

#include "novelty/retrieval/retrieval.hpp"
#include "novelty_host/llm/chat_client.hpp"

#include <cstddef>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host {

/// What the LLM is asked to write.
enum class RewriteKind {
    expand,    ///< alternative search questions: {"rewrites": [STR...]}
    hyde,      ///< hypothetical abstracts: {"abstracts": [STR...]}
    continue_, ///< one continuation of the question (single-query expansion): {"continuation": STR}
};

/// "expand", "hyde" or "expand-single": the stage label of token accounting.
const char* rewrite_kind_name(RewriteKind kind);

/// One query's outcome: the texts (1..n, in the LLM's order, trimmed, none empty), or an error
/// (texts empty) that names why (transport failure, or an invalid answer after one repair).
struct RewriteResult {
    std::vector<std::string> texts;
    std::string error;  ///< "" when ok

    bool ok() const { return error.empty(); }
};

/// Checks an answer strictly: one JSON object (a ```json fence is tolerated) whose key
/// ("rewrites" for expand, "abstracts" for hyde) is an array of at least one string, each
/// non-empty after trimming; for continue_, "continuation" is one non-empty string (out gets
/// it alone). Extra keys are ignored; texts beyond the first n are dropped (the answer is still
/// valid). Returns the problem, or std::nullopt with the trimmed texts in `out`.
std::optional<std::string> parse_rewrite_answer(const std::string& content, RewriteKind kind, std::size_t n,
                                                std::vector<std::string>& out);

/// The user message sent for `query`: "Research question: QUERY", then the number of texts asked
/// for (none for continue_). The system message is the built-in prompt "expand_query",
/// "hyde_abstracts" or "expand_continuation". Exposed for tests.
std::string rewrite_prompt(RewriteKind kind, const std::string& query, std::size_t n);

/// A QueryRewriter backed by a ChatClient (which must outlive it). Requests run at temperature 0
/// with a JSON-object response format, go through the client's response cache, and are counted
/// under the stage "expand" or "hyde"; an invalid answer gets one repair request (ask_json).
class LlmRewriter : public QueryRewriter {
public:
    LlmRewriter(ChatClient& client, RewriteKind kind);

    /// rewrite_kind_name(kind): "expand" or "hyde".
    std::string name() const override;
    /// The model that answers (the client's).
    const std::string& model() const;
    RewriteKind kind() const { return kind_; }

    /// One query, blocking: up to n texts. Throws Error when the call fails or the answer stays
    /// invalid. n == 0 returns nothing without a request.
    std::vector<std::string> rewrite(const std::string& query, std::size_t n) override;

    /// Queues one request per query at once (the client runs at most its concurrency in flight)
    /// and returns a future per query, in input order. Never throws for a failed call: the
    /// result carries the error. n == 0 gives ready, empty, successful results without requests.
    std::vector<std::future<RewriteResult>> submit_all(const std::vector<std::string>& queries, std::size_t n);
    /// submit_all, then waits for every result.
    std::vector<RewriteResult> rewrite_all(const std::vector<std::string>& queries, std::size_t n);

private:
    ChatClient& client_;
    RewriteKind kind_;
};

}  // namespace novelty::host
