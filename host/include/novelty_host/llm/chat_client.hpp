// An asynchronous client for OpenAI-compatible chat-completions servers (OpenAI, vLLM, llama.cpp's
// server, Ollama, TGI): POST {base_url}/chat/completions. Many requests are submitted at once and
// run on one worker thread driving libcurl's multi interface, at most `concurrency` at a time.
//
// A request is {"model", "messages": [{"role", "content"}...], "temperature", optional
// "max_tokens", optional "response_format": {"type": "json_object"}}; the answer's
// choices[0].message.content is the result, usage.prompt_tokens / completion_tokens are counted
// per stage. Successful answers can be kept in a SQLite response cache keyed by a SHA-256 of the
// model, the messages and the parameters, so a rerun asks the server nothing it already asked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "novelty_host/llm/http_embedder.hpp"  // EnvironmentLookup

namespace novelty::host {

struct ChatMessage {
    std::string role;     ///< "system", "user" or "assistant"
    std::string content;
};

/// One chat-completions call.
struct ChatRequest {
    std::vector<ChatMessage> messages;
    std::string model;           ///< "" = the client's model
    double temperature = 0.0;
    int max_tokens = 0;          ///< 0 = not sent (the server's default)
    bool json_object = true;     ///< ask for a JSON object (response_format json_object)
    std::string stage = "chat";  ///< label under which tokens and calls are counted
    bool use_cache = true;       ///< look up and store this call in the response cache
    /// When set, only answers for which it returns true are stored in the cache, and a cached
    /// answer for which it returns false is not used (the call goes to the server): an answer
    /// that fails validation is never kept.
    std::function<bool(const std::string& content)> cacheable;
};

/// The outcome of one call. Never an exception: failures are described in `error`.
struct ChatResult {
    bool ok = false;
    std::string content;          ///< choices[0].message.content when ok
    std::string error;            ///< why not ok: names the URL, status and body start
    long http_status = 0;         ///< the last HTTP status (0: none, e.g. a timeout or a cache hit)
    int attempts = 0;             ///< HTTP attempts made (0 for a cache hit)
    bool from_cache = false;
    bool cancelled = false;
    std::uint64_t prompt_tokens = 0;
    std::uint64_t completion_tokens = 0;
};

/// Per-stage accounting.
struct StageUsage {
    std::uint64_t calls = 0;           ///< requests submitted
    std::uint64_t http_attempts = 0;   ///< HTTP requests sent, retries included
    std::uint64_t cache_hits = 0;
    std::uint64_t failures = 0;        ///< calls that ended not ok (cancelled included)
    std::uint64_t prompt_tokens = 0;   ///< as reported by the server (cache hits count their stored usage)
    std::uint64_t completion_tokens = 0;
    /// Answers that arrived but failed their stage's JSON schema (ask_json), each then sent
    /// once for repair: `repaired` came back valid, `unrepaired` did not (or the repair call
    /// failed), so the stage recorded an error (an error record, a failed grade, the rule's
    /// verdict). Counted under the original stage, not its "-repair" stage.
    std::uint64_t invalid_answers = 0;
    std::uint64_t repaired = 0;
    std::uint64_t unrepaired = 0;
};

struct ChatClientOptions {
    /// The API root, e.g. "http://host:8000/v1"; "/chat/completions" is appended. A trailing '/'
    /// is ignored.
    std::string base_url;
    std::string api_key;   ///< sent as "Authorization: Bearer <key>" when not empty
    std::string model;     ///< default model of requests that name none (required)
    std::size_t concurrency = 8;       ///< requests in flight at most (1..1024)
    int max_retries = 5;               ///< retries after the first attempt
    double timeout_seconds = 120;      ///< limit for one attempt, connecting included
    double initial_backoff_seconds = 1;  ///< doubles with each retry, up to max_backoff_seconds
    double max_backoff_seconds = 60;     ///< cap of every wait, a server's Retry-After included
    /// max_tokens of requests that set none (0 = not sent: the server's default); bounds the
    /// answer of a small local model that would otherwise run on to its context's end.
    int max_tokens = 0;
    /// SQLite file of the response cache; "" = no cache. Created when missing.
    std::string cache_path;
};

/// Fills what the flags left empty from the environment: base_url from NOVELTY_LLM_BASE_URL,
/// api_key from NOVELTY_LLM_API_KEY then OPENAI_API_KEY, model from NOVELTY_LLM_MODEL, and
/// concurrency (when `concurrency_given` is false) from NOVELTY_LLM_CONCURRENCY. Empty variables
/// count as unset; a non-numeric NOVELTY_LLM_CONCURRENCY is a UsageError.
ChatClientOptions chat_options_from_env(ChatClientOptions flags, bool concurrency_given = false,
                                        const EnvironmentLookup& lookup = {});

/// The asynchronous client.
///
/// Retries: connection failures, timeouts, HTTP 408, 429 and 5xx, and a 2xx body that is not JSON
/// are retried up to max_retries times after initial_backoff * 2^k (less up to 10% jitter), or
/// after the server's Retry-After / retry-after-ms when it sends one, capped at max_backoff.
/// Waiting requests hold no connection slot. Other statuses fail at once. A result's callback
/// runs on the client's worker thread (or inside submit() for a cache hit); it must not block
/// for long and may submit further requests. Thread-safe: any thread may submit.
class ChatClient {
public:
    using Callback = std::function<void(ChatResult)>;

    /// Checks the options (UsageError for an empty base URL or model, concurrency 0, ...), opens
    /// the cache and starts the worker thread.
    explicit ChatClient(ChatClientOptions options);
    /// Cancels what is still pending (callbacks get a cancelled result) and joins the worker.
    ~ChatClient();
    ChatClient(const ChatClient&) = delete;
    ChatClient& operator=(const ChatClient&) = delete;

    /// Queues a call; `done` receives its result exactly once.
    void submit(ChatRequest request, Callback done);
    /// Queues a call; the future receives its result.
    std::future<ChatResult> submit(ChatRequest request);
    /// Runs all requests (at most `concurrency` at a time) and returns their results in order.
    std::vector<ChatResult> run_all(std::vector<ChatRequest> requests);

    /// Ends every queued and in-flight call with a cancelled result; later submissions are
    /// cancelled at once.
    void cancel();
    /// Blocks until nothing is queued or in flight.
    void wait_idle();

    /// Counts one answer of `stage` that failed its schema; `repaired`: valid after the repair.
    void note_invalid_answer(const std::string& stage, bool repaired);

    /// Usage per stage label, and over all stages under "total".
    std::map<std::string, StageUsage> usage() const;
    /// The key under which `request` is cached: SHA-256 (hex) of the model, messages, temperature,
    /// max_tokens and json_object.
    std::string cache_key(const ChatRequest& request) const;
    /// The options in use (base_url without its trailing '/').
    const ChatClientOptions& options() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// The client's usage as text for stderr, one line per stage label (and "total"):
/// "novelty: llm MODEL STAGE: N calls, N cached, N failed, P+C tokens", followed by
/// ", N retries" when HTTP attempts were repeated and ", N invalid answers (R repaired, U not)"
/// when answers failed their schema.
std::string usage_report(const ChatClient& client);

}  // namespace novelty::host
