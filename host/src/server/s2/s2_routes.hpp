// The HTTP side of the Semantic Scholar-compatible routes: /graph/v1/paper/... and
// /recommendations/v1/papers/forpaper/{id} on the server's cpp-httplib server, with that API's
// error shape ({"error": message}) and statuses, and its key header.
#pragma once

#include "server/server_engine.hpp"

#include <httplib.h>

#include <functional>
#include <string>

namespace novelty::host::s2 {

struct S2Hooks {
    ServerEngine* engine = nullptr;
    /// True when the request may be served (the server's token, sent as a bearer token or as
    /// `x-api-key`; always true without a token).
    std::function<bool(const httplib::Request&)> authorised;
    /// Counts an answered request in the server's metrics.
    std::function<void(const std::string& endpoint, int status, double seconds)> record;
    /// Logs an internal error (500).
    std::function<void(const std::string& line)> log;
    std::size_t max_body_bytes = 16u << 20;
};

/// Registers the routes (before any catch-all route of the server).
void add_s2_routes(httplib::Server& http, const S2Hooks& hooks);

}  // namespace novelty::host::s2
