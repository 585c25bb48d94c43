// The HTTP JSON API (docs/api.md): scoring, search and embedding over one read-only corpus,
// with request batching, limits, bearer-token auth, Prometheus metrics and a job registry for
// long-running work.
#pragma once

#include "novelty/encoder/embedder.hpp"
#include "novelty/search/backends.hpp"
#include "novelty_host/jobs/job_registry.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace novelty::host {

struct ServerOptions {
    std::string corpus_dir;          ///< opened read-only; nothing is ever written into it
    std::string host = "127.0.0.1";  ///< address to bind; 127.0.0.1 keeps it on this machine
    int port = 8080;                 ///< 0 = any free port (see Server::port())
    /// Bearer token every endpoint but /healthz requires ("Authorization: Bearer TOKEN"); empty
    /// = no auth.
    std::string token;
    /// The search backend, as `novelty score --device/--device-storage/--device-memory/--storage`.
    BackendChoice backend;
    std::size_t threads = 0;         ///< backend worker threads, 0 = all cores
    std::size_t http_threads = 64;   ///< connections served at once
    /// Connections open at once, served or waiting for a thread; more are answered 503 at once.
    std::size_t max_connections = 256;
    /// A request's line and headers must arrive within this (counted from the connection's
    /// accept for its first request), its body within body_timeout after them; slower
    /// clients are cut off (408 or a closed connection), so they cannot hold threads.
    std::chrono::milliseconds header_timeout{10000};
    std::chrono::milliseconds body_timeout{60000};

    // Limits: requests beyond them get 400 (413 for the body), with a message saying which.
    std::size_t max_body_bytes = 16u << 20;
    std::size_t max_records = 1024;  ///< ideas, queries or records per request
    std::size_t max_k = 2048;        ///< search k (and p, q of scoring) at most this
    std::size_t max_text_bytes = 100000;  ///< per title + text

    // Scoring defaults and fixed settings (docs/scoring.md).
    std::size_t default_p = 100;
    std::size_t default_q = 50;
    std::size_t default_k = 10;
    std::size_t evidence = 10;       ///< nearest papers listed per idea
    bool include_self = false;

    /// Request batching: records per backend call and how long a batch waits to fill.
    /// max_batch = 1 turns batching off (one request per backend call).
    std::size_t max_batch = 64;
    std::chrono::microseconds max_wait{2000};

    std::size_t job_workers = 1;     ///< threads running jobs
    /// The web page (docs/ui.md) at /ui/, with / redirecting to it; false = neither is served.
    bool ui = true;
    /// Serve the page's files from this folder (read on each request, for development) instead
    /// of the copies compiled into the binary; empty = the compiled ones.
    std::string ui_dir;
    /// Makes the encoder for records sent with text (called at most once, on first need);
    /// empty = text is refused and records need a "vector" or a corpus paper id.
    std::function<std::unique_ptr<Embedder>()> make_embedder;
    /// Told about things an operator should know (density caches computed in memory, ...).
    std::function<void(const std::string&)> on_log;
};

/// Makes a job's work from a request body: parse and check the body (throw InputError or
/// UsageError for a 400 naming what to fix), then return the work, which runs later on a job
/// thread and returns the job's result as JSON text.
using JobFactory = std::function<std::function<std::string()>(const std::string& body)>;
/// As JobFactory, for work that reports its progress (GET /v1/jobs/{id} shows the last report).
using ProgressJobFactory = std::function<std::function<std::string(const JobProgressFn&)>(const std::string& body)>;

/// Counts the batcher's backend calls so far, per endpoint kind (score, search, embed).
/// One operation the server answers (its route table, Server::routes()).
struct ServedRoute {
    std::string method;    ///< "GET" or "POST"
    /// The path as routed: a literal path, or a regular expression whose groups are the path's
    /// parameters, e.g. "/v1/jobs/([0-9A-Za-z]+)".
    std::string pattern;
    std::string endpoint;  ///< the name /metrics counts it under, e.g. "score"
};

struct BatchCounts {
    std::size_t score_calls = 0, search_calls = 0, embed_calls = 0;
    std::size_t score_requests = 0, search_requests = 0, embed_requests = 0;
};

class Server {
public:
    /// Opens the corpus and the backend. Throws CorpusError for a bad corpus and UsageError for
    /// a bad device or option.
    explicit Server(ServerOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Adds POST `path` creating a job of `kind` (202 with its id; GET /v1/jobs/{id} polls it).
    /// Call before start().
    void add_job_endpoint(const std::string& path, const std::string& kind, JobFactory factory);
    /// As add_job_endpoint(), for work that reports progress.
    void add_progress_job_endpoint(const std::string& path, const std::string& kind, ProgressJobFactory factory);

    /// Binds and serves on a background thread; returns once requests are being accepted.
    /// Throws Error when the address cannot be bound.
    void start();
    /// The bound port (after start()).
    int port() const;
    /// Stops accepting connections, lets requests in flight finish and get their replies, then
    /// ends the batchers and job threads. Idempotent; safe from any thread but a handler's.
    void stop();

    BatchCounts batch_counts() const;
    /// Requests being handled now.
    std::size_t in_flight() const;
    /// Every operation the server answers, in the order routed (job endpoints included once
    /// added); not the 405 replies to other methods. docs/openapi.yaml describes each of them
    /// (`novelty serve --print-routes` prints this table; python/tests/test_openapi.py compares).
    std::vector<ServedRoute> routes() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty::host
