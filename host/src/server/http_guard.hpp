// The HTTP server's connection handling, guarded against clients that hold connections open:
// cpp-httplib gives each connection a worker thread for its whole life and waits up to its read
// timeout for each piece of a request, so clients sending a header line every few seconds could
// hold every worker and starve /healthz. Here
//  - the request line and headers must arrive within a header deadline (from the connection's
//    accept for its first request, from the first byte for later ones), and in at most
//    max_header_bytes;
//  - a body must arrive within a body deadline after its headers;
//  - at most max_connections connections are open (served or waiting for a worker); more are
//    answered 503 at once on the accepting thread, without taking a worker.
// Requests themselves are still parsed and routed by cpp-httplib.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace novelty::host::detail {

struct ConnectionLimits {
    std::size_t workers = 64;                         ///< connections served at once
    std::size_t max_connections = 256;                ///< open at once, served or waiting
    std::chrono::milliseconds header_timeout{10000};  ///< request line and headers
    std::chrono::milliseconds body_timeout{60000};    ///< the body, after the headers
    std::chrono::milliseconds idle_timeout{2000};     ///< keep-alive: wait for the next request
    std::size_t max_header_bytes = 64 * 1024;         ///< request line and headers together
};

/// Counts for /metrics.
struct ConnectionCounts {
    std::size_t open = 0;          ///< connections open now (served or waiting for a worker)
    std::size_t rejected = 0;      ///< refused with 503: max_connections were open
    std::size_t timed_out = 0;     ///< requests cut off by the header or body deadline
};

/// One route as registered: method, path pattern (cpp-httplib's, a regular expression for a
/// path with parameters) and its metrics endpoint name.
struct RouteEntry {
    std::string method, pattern, endpoint;
};

class GuardedHttpServer : public httplib::Server {
public:
    explicit GuardedHttpServer(ConnectionLimits limits);
    ~GuardedHttpServer() override;

    ConnectionCounts counts() const;
    /// The routes noted so far (note_route), in order.
    const std::vector<RouteEntry>& routes() const { return routes_; }
    void note(RouteEntry route) { routes_.push_back(std::move(route)); }
    /// From a handler: close the connection after this reply (a body was left unread).
    static void close_after_reply();

private:
    class WorkerQueue;
    // Called by cpp-httplib on its accepting thread for each new connection.
    bool process_and_close_socket(socket_t sock) override;
    void serve_connection(socket_t sock, std::chrono::steady_clock::time_point accepted);
    void reject(socket_t sock);
    bool stopping() const { return svr_sock_ == INVALID_SOCKET; }

    ConnectionLimits limits_;
    WorkerQueue* queue_ = nullptr;  // owned by cpp-httplib while it listens
    std::atomic<std::size_t> open_{0};
    std::atomic<std::size_t> rejected_{0};
    std::atomic<std::size_t> timed_out_{0};
    std::vector<RouteEntry> routes_;  ///< written while routing, before the server starts
};

/// Notes a route in the server's table when `http` is a GuardedHttpServer (the server's); every
/// place that routes an operation calls it beside http.Get / http.Post, so that the table, which
/// docs/openapi.yaml is checked against, holds every operation served.
void note_route(httplib::Server& http, const std::string& method, const std::string& pattern, const std::string& endpoint);

/// Reads a request body through `reader` (a content-reader handler's), keeping at most
/// `max_bytes`. Throws HttpError 413 beyond that (whatever the transfer encoding), 408 when
/// the body deadline passes, 400 when the body is cut off or its chunked framing is broken.
std::string read_body(const httplib::Request& req, const httplib::ContentReader& reader, std::size_t max_bytes);

/// An error that maps to an HTTP status other than 400/500.
class HttpError : public std::runtime_error {
public:
    HttpError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
    int status() const noexcept { return status_; }

private:
    int status_;
};

}  // namespace novelty::host::detail
