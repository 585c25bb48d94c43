#include "server/s2/s2_routes.hpp"

#include "server/http_guard.hpp"
#include "server/s2/s2_error.hpp"
#include "server/s2/s2_handlers.hpp"

#include "novelty/util/error.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>

namespace novelty::host::s2 {

namespace {

using Handler = std::function<nlohmann::ordered_json(const httplib::Request&, const std::string& body)>;

void reply_error(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    // (never an empty message: one that began with a NUL byte would read as one)
    const std::string said = message.empty() ? "request failed with status " + std::to_string(status) : message;
    res.set_content(nlohmann::ordered_json{{"error", said}}.dump(), "application/json");
}

/// Runs a handler with the key check, the API's error shape and the server's metrics.
void serve(const S2Hooks& hooks, const std::string& endpoint, const httplib::Request& req, httplib::Response& res,
           const std::function<void()>& handle) {
    const auto start = std::chrono::steady_clock::now();
    try {
        if (!hooks.authorised(req)) {
            res.status = 403;
            res.set_content(nlohmann::ordered_json{{"message", "Forbidden: send the server's token as 'x-api-key: TOKEN' "
                                                               "or 'Authorization: Bearer TOKEN'"}}
                                .dump(),
                            "application/json");
            detail::GuardedHttpServer::close_after_reply();
        } else {
            handle();
        }
    } catch (const S2Error& e) {
        reply_error(res, e.status(), e.what());
    } catch (const detail::HttpError& e) {
        reply_error(res, e.status(), e.what());
    } catch (const std::exception& e) {
        const ErrorCodes codes = error_codes(error_kind(e));
        reply_error(res, codes.http_status, e.what());
        if (codes.http_status >= 500 && hooks.log) hooks.log(req.method + " " + req.path + ": " + e.what());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (hooks.record) hooks.record(endpoint, res.status == -1 ? 200 : res.status, seconds);
}

void route_get(httplib::Server& http, const S2Hooks& hooks, const std::string& path, const std::string& endpoint,
         const Handler& handler) {
    detail::note_route(http, "GET", path, endpoint);
    http.Get(path, [hooks, endpoint, handler](const httplib::Request& req, httplib::Response& res) {
        serve(hooks, endpoint, req, res, [&] { res.set_content(handler(req, "").dump(), "application/json"); });
    });
}

void route_post(httplib::Server& http, const S2Hooks& hooks, const std::string& path, const std::string& endpoint,
          const Handler& handler) {
    detail::note_route(http, "POST", path, endpoint);
    http.Post(path, [hooks, endpoint, handler](const httplib::Request& req, httplib::Response& res,
                                               const httplib::ContentReader& reader) {
        serve(hooks, endpoint, req, res, [&] {
            const std::string body = detail::read_body(req, reader, hooks.max_body_bytes);
            res.set_content(handler(req, body).dump(), "application/json");
        });
    });
}

/// 405 for the other methods on a path served with `allowed`.
void not_allowed(httplib::Server& http, const S2Hooks& hooks, const std::string& path, const std::string& endpoint,
                 const std::string& allowed) {
    auto handler = [hooks, endpoint, allowed](const httplib::Request& req, httplib::Response& res) {
        serve(hooks, endpoint, req, res, [&] {
            res.set_header("Allow", allowed);
            reply_error(res, 405, req.method + " is not allowed here; use " + allowed);
        });
    };
    if (allowed != "GET") http.Get(path, handler);
    if (allowed != "POST") http.Post(path, handler);
    http.Put(path, handler);
    http.Delete(path, handler);
}

}  // namespace

void add_s2_routes(httplib::Server& http, const S2Hooks& hooks) {
    // One S2Corpus for the server's life: the catalogue and the text index are built once.
    auto corpus = std::make_shared<S2Corpus>(*hooks.engine);
    const auto get = [&](const std::string& path, const std::string& endpoint,
                         std::function<Reply(S2Corpus&, const httplib::Request&)> f) {
        route_get(http, hooks, path, endpoint, [corpus, f](const httplib::Request& req, const std::string&) { return f(*corpus, req); });
        not_allowed(http, hooks, path, endpoint, "GET");
    };
    const auto post = [&](const std::string& path, const std::string& endpoint,
                          std::function<Reply(S2Corpus&, const httplib::Request&, const std::string&)> f) {
        route_post(http, hooks, path, endpoint,
                   [corpus, f](const httplib::Request& req, const std::string& body) { return f(*corpus, req, body); });
        not_allowed(http, hooks, path, endpoint, "POST");
    };
    // cpp-httplib takes the first pattern that matches: the fixed paths before /paper/{id}.
    get("/graph/v1/paper/search/match", "s2_match", [](S2Corpus& c, const httplib::Request& r) { return paper_match(c, r.params); });
    get("/graph/v1/paper/search/bulk", "s2_bulk", [](S2Corpus& c, const httplib::Request& r) { return paper_bulk_search(c, r.params); });
    get("/graph/v1/paper/search", "s2_search", [](S2Corpus& c, const httplib::Request& r) { return paper_search(c, r.params); });
    get("/graph/v1/paper/autocomplete", "s2_autocomplete",
        [](S2Corpus& c, const httplib::Request& r) { return paper_autocomplete(c, r.params); });
    post("/graph/v1/paper/batch", "s2_batch",
         [](S2Corpus& c, const httplib::Request& r, const std::string& body) { return paper_batch(c, body, r.params); });
    get(R"(/graph/v1/paper/(.+)/citations)", "s2_citations",
        [](S2Corpus& c, const httplib::Request& r) { return paper_citations(c, r.matches[1], r.params); });
    get(R"(/graph/v1/paper/(.+)/references)", "s2_references",
        [](S2Corpus& c, const httplib::Request& r) { return paper_references(c, r.matches[1], r.params); });
    get(R"(/graph/v1/paper/(.+)/authors)", "s2_paper_authors",
        [](S2Corpus& c, const httplib::Request& r) { return paper_authors(c, r.matches[1], r.params); });
    get(R"(/graph/v1/paper/(.+))", "s2_paper", [](S2Corpus& c, const httplib::Request& r) { return paper_details(c, r.matches[1], r.params); });
    get("/graph/v1/author/search", "s2_author_search", [](S2Corpus& c, const httplib::Request& r) { return author_search(c, r.params); });
    post("/graph/v1/author/batch", "s2_author_batch",
         [](S2Corpus& c, const httplib::Request& r, const std::string& body) { return author_batch(c, body, r.params); });
    get(R"(/graph/v1/author/([^/]+)/papers)", "s2_author_papers",
        [](S2Corpus& c, const httplib::Request& r) { return author_papers(c, r.matches[1], r.params); });
    get(R"(/graph/v1/author/([^/]+))", "s2_author", [](S2Corpus& c, const httplib::Request& r) { return author_details(c, r.matches[1], r.params); });
    get("/graph/v1/snippet/search", "s2_snippets", [](S2Corpus& c, const httplib::Request& r) { return snippet_search(c, r.params); });
    get(R"(/recommendations/v1/papers/forpaper/(.+))", "s2_recommendations",
        [](S2Corpus& c, const httplib::Request& r) { return recommendations(c, r.matches[1], r.params); });
    post(R"(/recommendations/v1/papers/?)", "s2_recommendations_lists", [](S2Corpus& c, const httplib::Request& r, const std::string& body) {
        return recommendations_from_lists(c, body, r.params);
    });
}

}  // namespace novelty::host::s2
