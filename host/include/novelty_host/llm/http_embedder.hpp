// A client for OpenAI-compatible embedding servers: POST {base_url}/embeddings, as spoken by
// OpenAI, Text Embeddings Inference (TEI), vLLM, Ollama and llama.cpp's server.
//
// Requests carry {"model": ..., "input": [texts...], "encoding_format": "float"}; answers are
// {"data": [{"index": i, "embedding": [...]}, ...]}. Rows are put back in input order by "index",
// checked (every index once, one dimension, finite values) and L2-normalised here, whatever the
// server did. Transient failures are retried with exponential backoff; see HttpEmbedderOptions.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "novelty/encoder/embedder.hpp"

namespace novelty::host {

/// Settings of an HttpEmbedder.
struct HttpEmbedderOptions {
    /// The API root, e.g. "http://host:8080/v1" or "https://api.openai.com/v1"; "/embeddings" is
    /// appended. A trailing '/' is ignored.
    std::string base_url;
    /// The model name sent with each request (required: OpenAI, vLLM and Ollama need it).
    std::string model;
    /// Sent as "Authorization: Bearer <api_key>" when not empty.
    std::string api_key;
    /// Texts per request.
    std::size_t batch_size = 64;
    /// Retries per request after the first attempt (0: no retry).
    int max_retries = 5;
    /// Limit for one attempt, connecting included.
    double timeout_seconds = 60;
    /// The first backoff; it doubles with each retry up to max_backoff_seconds.
    double initial_backoff_seconds = 0.5;
    /// The longest wait between attempts, a server's Retry-After included.
    double max_backoff_seconds = 30;
};

/// Looks up an environment variable: returns nullptr when it is not set (like std::getenv).
using EnvironmentLookup = std::function<const char*(const char*)>;

/// Fills what the flags left empty from the environment. Precedence: a non-empty flag first,
/// then the environment:
///   api_key: NOVELTY_EMBED_API_KEY, then OPENAI_API_KEY;
///   model:   NOVELTY_EMBED_MODEL.
/// Variables set to the empty string count as unset. `lookup` defaults to std::getenv (tests pass
/// their own).
HttpEmbedderOptions http_embedder_options_from_env(HttpEmbedderOptions flags,
                                                   const EnvironmentLookup& lookup = {});

/// Waits the given number of seconds. HttpEmbedder calls it between attempts; tests inject one
/// that records the durations instead of sleeping.
using SleepFunction = std::function<void(double seconds)>;

/// An Embedder backed by an OpenAI-compatible HTTP server.
///
/// Retries: connection failures, timeouts, HTTP 408, 429 and 5xx, and a 2xx answer whose body is
/// not valid JSON (a truncated body or a proxy's HTML page is usually transient) are retried up to
/// max_retries times. The wait before retry k (0-based) is initial_backoff * 2^k, capped at
/// max_backoff, less up to 10% of jitter; when the server sends Retry-After (delta-seconds or an
/// HTTP date; OpenAI's retry-after-ms is also understood) that wait is used instead, capped at
/// max_backoff. Other statuses (400, 401, 404, ...) and well-formed answers that break the
/// contract (missing or repeated index, mixed dimensions, non-finite or all-zero vectors) fail at
/// once. Every failure is a novelty::Error naming the URL, the HTTP status and the start of the
/// body; the API key is never printed.
///
/// One libcurl handle is reused, so connections are kept alive between requests. An instance is
/// not safe to use from several threads at once.
class HttpEmbedder : public novelty::Embedder {
public:
    /// Checks the options (UsageError when base_url or model is empty, batch_size is 0, ...).
    /// `sleep` defaults to really sleeping.
    explicit HttpEmbedder(HttpEmbedderOptions options, SleepFunction sleep = {});
    ~HttpEmbedder() override;
    HttpEmbedder(const HttpEmbedder&) = delete;
    HttpEmbedder& operator=(const HttpEmbedder&) = delete;
    HttpEmbedder(HttpEmbedder&&) noexcept;
    HttpEmbedder& operator=(HttpEmbedder&&) noexcept;

    /// "<base_url>#<model>", e.g. "http://host:8080/v1#bge-m3".
    std::string name() const override;
    /// 0 until the first successful answer; fixed after that (another dimension is an error).
    std::size_t dim() const override;
    /// "" (the server does not say).
    std::string pooling() const override;
    /// texts.size() x dim() floats, row-major, rows L2-normalised. Sends ceil(n / batch_size)
    /// requests, in order; no request for an empty list. An empty text is sent as " ", since some
    /// servers (OpenAI) reject empty strings.
    std::vector<float> embed(const std::vector<std::string>& texts) override;

    /// The options in use (base_url without its trailing '/').
    const HttpEmbedderOptions& options() const;
    /// HTTP requests attempted so far, retries included.
    std::size_t requests_sent() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Whether an encoder named `embedder_name` makes vectors comparable to those of a corpus whose
/// manifest records `recorded`: the same name, or an embedding server's "URL#MODEL" when the
/// corpus records the model's name alone (its vectors came with the data, as the s2 embeddings
/// files' do). The CLI and the server's services check their encoder by this one rule.
bool same_encoder(const std::string& recorded, const std::string& embedder_name);

}  // namespace novelty::host
