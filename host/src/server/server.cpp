// The HTTP layer of the server: routes, auth, limits, errors as JSON, metrics and the lifecycle.
// The work itself is in server_engine.cpp.
#include "novelty_host/server/server.hpp"

#include "server/http_guard.hpp"
#include "server/s2/s2_routes.hpp"
#include "server/server_engine.hpp"
#include "server/server_metrics.hpp"
#include "server/server_requests.hpp"
#include "server/ui_api.hpp"
#include "server/ui_static.hpp"

#include "novelty/util/error.hpp"
#include "novelty_host/jobs/job_registry.hpp"

#include <httplib.h>
#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

namespace novelty::host {

namespace {

/// Compares a presented token with the configured one in time that depends only on their
/// lengths, never on where they first differ.
bool same_token(const std::string& given, const std::string& expected) {
    unsigned char diff = given.size() == expected.size() ? 0 : 1;
    const std::size_t n = expected.size();
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
        diff |= static_cast<unsigned char>(g ^ static_cast<unsigned char>(expected[i]));
    }
    return diff == 0;
}

std::string error_body(const std::string& message, const std::string& parameter = "") {
    nlohmann::json body{{"error", message}};
    if (!parameter.empty()) body["parameter"] = parameter;  // the request's JSON key at fault
    return dump_json(body);
}

const char* default_message(int status);

/// An exception's message for a reply: never empty (a message that began with a NUL byte read as
/// one), so that every refusal says something.
std::string message_of(const std::exception& e, int status) {
    const std::string message = e.what();
    return message.empty() ? default_message(status) : message;
}

const char* default_message(int status) {
    switch (status) {
        case 400: return "bad request";
        case 401: return "missing or wrong bearer token: send 'Authorization: Bearer TOKEN'";
        case 404: return "no such endpoint (see docs/api.md)";
        case 405: return "method not allowed";
        case 413: return "the body is larger than the server's limit";
        default: return status >= 500 ? "internal error" : "request failed";
    }
}

}  // namespace

struct Server::Impl {
    ServerOptions options;
    ServerEngine engine;
    JobRegistry jobs;
    ServerMetrics metrics;
    detail::GuardedHttpServer http;
    detail::UiApi ui_api;                     ///< /v1/papers, /v1/corpus/rnd, /v1/score-job
    std::unique_ptr<detail::UiFiles> ui_files;  ///< the page's files; null with options.ui false
    std::thread listener;
    std::atomic<std::size_t> in_flight{0};
    std::atomic<bool> started{false};
    std::mutex stop_mutex;
    bool stopped = false;
    int bound_port = 0;
    socket_t listen_socket = -1;

    static detail::ConnectionLimits limits_of(const ServerOptions& o) {
        detail::ConnectionLimits limits;
        limits.workers = std::max<std::size_t>(1, o.http_threads);
        limits.max_connections = std::max<std::size_t>(1, o.max_connections);
        limits.header_timeout = o.header_timeout;
        limits.body_timeout = o.body_timeout;
        return limits;
    }

    explicit Impl(ServerOptions given)
        : options(std::move(given)), engine(options), jobs(options.job_workers), http(limits_of(options)),
          ui_api(engine, options) {
        if (options.ui) ui_files = std::make_unique<detail::UiFiles>(options.ui_dir);
        http.set_payload_max_length(options.max_body_bytes);
        http.set_keep_alive_timeout(2);
        http.set_keep_alive_max_count(1000);
        // A reply is written in pieces (headers, then body): without TCP_NODELAY the body waits for
        // the client's delayed ACK of the headers, about 40 ms, on every keep-alive request.
        http.set_tcp_nodelay(true);
        // Remember the listening socket, to widen its backlog after binding (see start()).
        http.set_socket_options([this](socket_t sock) {
            int yes = 1;
            ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
            listen_socket = sock;
        });
        http.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
            if (res.body.empty()) {
                std::string message = default_message(res.status);
                if (res.status == 413)
                    message = "the body is larger than the limit of " + std::to_string(options.max_body_bytes) +
                              " bytes; send fewer records per request";
                res.set_content(error_body(message), "application/json");
            }
        });
        route();
    }

    bool authorised(const httplib::Request& req) const {
        if (options.token.empty()) return true;
        const std::string header = req.get_header_value("Authorization");
        const std::string prefix = "Bearer ";
        if (header.size() < prefix.size() || header.compare(0, prefix.size(), prefix) != 0) return false;
        return same_token(header.substr(prefix.size()), options.token);
    }

    /// The Semantic Scholar clients' header: `x-api-key: TOKEN` (the server's token).
    bool api_key_matches(const httplib::Request& req) const {
        return !options.token.empty() && req.has_header("x-api-key") &&
               same_token(req.get_header_value("x-api-key"), options.token);
    }

    void add_s2_routes() {
        s2::S2Hooks hooks;
        hooks.engine = &engine;
        hooks.authorised = [this](const httplib::Request& req) { return authorised(req) || api_key_matches(req); };
        hooks.record = [this](const std::string& endpoint, int status, double seconds) {
            metrics.record(endpoint, status, seconds);
        };
        hooks.log = [this](const std::string& line) {
            if (options.on_log) options.on_log(line);
        };
        hooks.max_body_bytes = options.max_body_bytes;
        s2::add_s2_routes(http, hooks);
    }

    /// Runs a handler with auth, in-flight counting, error mapping and metrics.
    void serve(const std::string& endpoint, bool needs_auth, const httplib::Request& req, httplib::Response& res,
               const std::function<void()>& handle) {
        const auto start = std::chrono::steady_clock::now();
        struct InFlight {  // counted down however the handler ends
            std::atomic<std::size_t>& n;
            explicit InFlight(std::atomic<std::size_t>& count) : n(count) { ++n; }
            ~InFlight() { --n; }
        } counted(in_flight);
        res.set_header("X-Content-Type-Options", "nosniff");
        try {
            if (needs_auth && !authorised(req)) {
                res.status = 401;
                res.set_header("WWW-Authenticate", "Bearer");
                res.set_content(error_body(default_message(401)), "application/json");
                detail::GuardedHttpServer::close_after_reply();  // the body, if any, is left unread
            } else {
                handle();
            }
        } catch (const detail::HttpError& e) {
            res.status = e.status();
            res.set_content(error_body(message_of(e, e.status())), "application/json");
        } catch (const std::exception& e) {
            // The status comes from the one table (novelty/util/error.hpp); a parameter at fault is
            // named as the JSON key that sets it.
            const ErrorCodes codes = error_codes(error_kind(e));
            const auto* usage = dynamic_cast<const UsageError*>(&e);
            res.status = codes.http_status;
            res.set_content(error_body(message_of(e, codes.http_status), usage ? usage->parameter() : ""), "application/json");
            if (codes.http_status >= 500 && options.on_log) options.on_log(req.method + " " + req.path + ": " + e.what());
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        metrics.record(endpoint, res.status == -1 ? 200 : res.status, seconds);
    }

    void post_json(const std::string& path, const std::string& endpoint,
                   std::string (ServerEngine::*method)(const nlohmann::json&)) {
        detail::note_route(http, "POST", path, endpoint);
        http.Post(path, [this, endpoint, method](const httplib::Request& req, httplib::Response& res,
                                                 const httplib::ContentReader& reader) {
            serve(endpoint, true, req, res, [&] {
                const std::string body = detail::read_body(req, reader, options.max_body_bytes);
                res.set_content((engine.*method)(parse_body(body)), "application/json");
            });
        });
        not_allowed(path, endpoint, "POST");
    }

    void not_allowed(const std::string& path, const std::string& endpoint, const std::string& allowed) {
        auto handler = [this, endpoint, allowed](const httplib::Request& req, httplib::Response& res) {
            serve(endpoint, false, req, res, [&] {
                res.status = 405;
                res.set_header("Allow", allowed);
                res.set_content(error_body(req.method + " is not allowed here; use " + allowed), "application/json");
            });
        };
        if (allowed != "GET") http.Get(path, handler);
        if (allowed != "POST") http.Post(path, handler);
        http.Put(path, handler);
        http.Delete(path, handler);
    }

    void route() {
        post_json("/v1/score", "score", &ServerEngine::score);
        post_json("/v1/search", "search", &ServerEngine::search);
        post_json("/v1/embed", "embed", &ServerEngine::embed);
        post_json("/v1/retrieve", "retrieve", &ServerEngine::retrieve);
        add_s2_routes();
        detail::note_route(http, "GET", "/healthz", "healthz");
        http.Get("/healthz", [this](const httplib::Request& req, httplib::Response& res) {
            serve("healthz", false, req, res, [&] {
                const Corpus& corpus = engine.corpus();
                nlohmann::ordered_json j{{"status", "ok"},
                                         {"version", NOVELTY_VERSION},
                                         {"corpus", {{"papers", corpus.size()},
                                                     {"dim", corpus.manifest().dim},
                                                     {"identity", corpus.identity()},
                                                     {"embedder", corpus.manifest().embedder
                                                                      ? corpus.manifest().embedder->name
                                                                      : std::string()}}}};
                res.set_content(j.dump(), "application/json");
            });
        });
        not_allowed("/healthz", "healthz", "GET");
        detail::note_route(http, "GET", "/metrics", "metrics");
        http.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
            serve("metrics", true, req, res,
                  [&] { res.set_content(metrics.render(extra_metrics()), "text/plain; version=0.0.4; charset=utf-8"); });
        });
        not_allowed("/metrics", "metrics", "GET");
        detail::note_route(http, "GET", R"(/v1/jobs/([0-9A-Za-z]+))", "jobs");
        http.Get(R"(/v1/jobs/([0-9A-Za-z]+))", [this](const httplib::Request& req, httplib::Response& res) {
            serve("jobs", true, req, res, [&] {
                const auto job = jobs.get(req.matches[1]);
                if (!job) {
                    res.status = 404;
                    res.set_content(error_body("no job '" + std::string(req.matches[1]) +
                                               "' (unknown, or finished long ago and forgotten)"),
                                    "application/json");
                    return;
                }
                nlohmann::ordered_json j{{"id", job->id},
                                         {"kind", job->kind},
                                         {"status", job_state_name(job->state)},
                                         {"created", job->created_unix},
                                         {"finished", job->finished_unix > 0 ? nlohmann::ordered_json(job->finished_unix)
                                                                             : nlohmann::ordered_json(nullptr)}};
                j["progress"] = job->progress ? nlohmann::ordered_json{{"stage", job->progress->stage},
                                                                      {"done", job->progress->done},
                                                                      {"total", job->progress->total}}
                                              : nlohmann::ordered_json(nullptr);
                if (job->state == JobState::done) j["result"] = parse_ordered_json(job->result);
                if (job->state == JobState::failed) j["error"] = job->error;
                res.set_content(j.dump(), "application/json");
            });
        });
        not_allowed(R"(/v1/jobs/([0-9A-Za-z]+))", "jobs", "GET");
        route_ui();
    }

    /// The web page's files and the endpoints only it needs (host/src/server/ui_*.cpp).
    void route_ui() {
        detail::note_route(http, "POST", "/v1/papers", "papers");
        http.Post("/v1/papers", [this](const httplib::Request& req, httplib::Response& res,
                                       const httplib::ContentReader& reader) {
            serve("papers", true, req, res, [&] {
                const std::string body = detail::read_body(req, reader, options.max_body_bytes);
                res.set_content(ui_api.papers(parse_body(body)), "application/json");
            });
        });
        not_allowed("/v1/papers", "papers", "POST");
        detail::note_route(http, "GET", "/v1/corpus/rnd", "corpus_rnd");
        http.Get("/v1/corpus/rnd", [this](const httplib::Request& req, httplib::Response& res) {
            serve("corpus_rnd", true, req, res, [&] {
                nlohmann::json params = nlohmann::json::object();
                for (const auto& [key, value] : req.params) {
                    const bool digits = !value.empty() && value.size() < 10 &&
                                        value.find_first_not_of("0123456789") == std::string::npos;
                    params[key] = digits ? nlohmann::json(std::stoll(value)) : nlohmann::json(value);
                }
                res.set_content(ui_api.rnd_distribution(params), "application/json");
            });
        });
        not_allowed("/v1/corpus/rnd", "corpus_rnd", "GET");
        if (!ui_files) return;
        detail::add_ui_static_routes(http, *ui_files, [this](const std::string& endpoint, bool needs_auth,
                                                             const httplib::Request& req, httplib::Response& res,
                                                             const std::function<void()>& handle) {
            serve(endpoint, needs_auth, req, res, handle);
        });
    }

    std::string extra_metrics() const {
        const BatchCounts c = engine.batch_counts();
        const std::vector<std::size_t> job_counts = jobs.counts();
        std::string out;
        char line[1024];
        out += "# HELP novelty_backend_batches_total Backend calls made by the request batcher, by kind.\n"
               "# TYPE novelty_backend_batches_total counter\n";
        const std::pair<const char*, std::size_t> calls[] = {
            {"score", c.score_calls}, {"search", c.search_calls}, {"embed", c.embed_calls}};
        for (const auto& [kind, n] : calls) {
            std::snprintf(line, sizeof line, "novelty_backend_batches_total{kind=\"%s\"} %zu\n", kind, n);
            out += line;
        }
        out += "# HELP novelty_backend_batched_requests_total Requests answered through the batcher, by kind.\n"
               "# TYPE novelty_backend_batched_requests_total counter\n";
        const std::pair<const char*, std::size_t> requests[] = {
            {"score", c.score_requests}, {"search", c.search_requests}, {"embed", c.embed_requests}};
        for (const auto& [kind, n] : requests) {
            std::snprintf(line, sizeof line, "novelty_backend_batched_requests_total{kind=\"%s\"} %zu\n", kind, n);
            out += line;
        }
        std::snprintf(line, sizeof line,
                      "# HELP novelty_http_requests_in_flight Requests being handled now.\n"
                      "# TYPE novelty_http_requests_in_flight gauge\nnovelty_http_requests_in_flight %zu\n",
                      in_flight.load());
        out += line;
        out += "# HELP novelty_jobs Jobs known to the job registry, by status.\n# TYPE novelty_jobs gauge\n";
        for (std::size_t s = 0; s < job_counts.size(); ++s) {
            std::snprintf(line, sizeof line, "novelty_jobs{status=\"%s\"} %zu\n",
                          job_state_name(static_cast<JobState>(s)), job_counts[s]);
            out += line;
        }
        const detail::ConnectionCounts connections = http.counts();
        std::snprintf(line, sizeof line,
                      "# HELP novelty_http_connections_open Connections open now (served or waiting for a worker).\n"
                      "# TYPE novelty_http_connections_open gauge\nnovelty_http_connections_open %zu\n"
                      "# HELP novelty_http_connections_rejected_total Connections refused with 503: --max-connections were open.\n"
                      "# TYPE novelty_http_connections_rejected_total counter\nnovelty_http_connections_rejected_total %zu\n"
                      "# HELP novelty_http_requests_timed_out_total Requests cut off by the header or body deadline.\n"
                      "# TYPE novelty_http_requests_timed_out_total counter\nnovelty_http_requests_timed_out_total %zu\n",
                      connections.open, connections.rejected, connections.timed_out);
        out += line;
        std::snprintf(line, sizeof line,
                      "# HELP novelty_corpus_papers Papers in the served corpus.\n"
                      "# TYPE novelty_corpus_papers gauge\nnovelty_corpus_papers %zu\n",
                      engine.corpus().size());
        return out + line;
    }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
    detail::UiApi& api = impl_->ui_api;
    add_progress_job_endpoint("/v1/score-job", "score", [&api](const std::string& body) { return api.score_job(body); });
}

Server::~Server() { stop(); }

void Server::add_job_endpoint(const std::string& path, const std::string& kind, JobFactory factory) {
    add_progress_job_endpoint(path, kind, [factory = std::move(factory)](const std::string& body) {
        return [work = factory(body)](const JobProgressFn&) { return work(); };
    });
}

void Server::add_progress_job_endpoint(const std::string& path, const std::string& kind, ProgressJobFactory factory) {
    Impl& s = *impl_;
    if (s.started) throw UsageError("add_job_endpoint: call it before start()");
    detail::note_route(s.http, "POST", path, kind);
    s.http.Post(path, [&s, kind, factory](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& reader) {
        s.serve(kind, true, req, res, [&] {
            JobRegistry::ProgressWork work = factory(detail::read_body(req, reader, s.options.max_body_bytes));
            const std::string id = s.jobs.submit_with_progress(kind, std::move(work));
            res.status = 202;
            res.set_header("Location", "/v1/jobs/" + id);
            res.set_content(nlohmann::ordered_json{{"id", id}, {"status", "queued"}, {"location", "/v1/jobs/" + id}}.dump(),
                            "application/json");
        });
    });
    s.not_allowed(path, kind, "POST");
}

void Server::start() {
    Impl& s = *impl_;
    if (s.started.exchange(true)) throw UsageError("the server was already started");
    if (s.options.port == 0) {
        s.bound_port = s.http.bind_to_any_port(s.options.host);
        if (s.bound_port < 0) throw Error("cannot bind to " + s.options.host + " (any port)");
    } else {
        if (!s.http.bind_to_port(s.options.host, s.options.port))
            throw Error("cannot bind to " + s.options.host + ":" + std::to_string(s.options.port) +
                        " (in use, or not an address of this machine)");
        s.bound_port = s.options.port;
    }
    // The library listens with a backlog of 5, so that a burst of clients connecting at once
    // has connections dropped; listening again on the bound socket raises the backlog.
    if (s.listen_socket >= 0) ::listen(s.listen_socket, SOMAXCONN);
    s.listener = std::thread([&s] { s.http.listen_after_bind(); });
    // Stopping before the listener runs would be lost (and hang the join): wait until it runs.
    while (!s.http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

int Server::port() const { return impl_->bound_port; }

void Server::stop() {
    if (!impl_) return;
    Impl& s = *impl_;
    std::lock_guard lock(s.stop_mutex);
    if (s.stopped) return;
    s.stopped = true;
    if (s.listener.joinable()) {
        s.http.stop();       // no new connections; handlers running now finish and reply
        s.listener.join();   // returns once the worker threads have drained
    }
    s.engine.stop();
    s.jobs.stop();
}

BatchCounts Server::batch_counts() const { return impl_->engine.batch_counts(); }

std::size_t Server::in_flight() const { return impl_->in_flight.load(); }

std::vector<ServedRoute> Server::routes() const {
    std::vector<ServedRoute> out;
    for (const detail::RouteEntry& r : impl_->http.routes()) out.push_back({r.method, r.pattern, r.endpoint});
    return out;
}

}  // namespace novelty::host
