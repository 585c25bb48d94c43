// novelty serve: the HTTP JSON API (docs/api.md) over one corpus, until SIGINT or SIGTERM.
#include "claims/claims_flags.hpp"
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"

#include "novelty/util/error.hpp"
#include "novelty_host/claimnov/claims_service.hpp"
#include "novelty_host/server/server.hpp"
#include "novelty_host/llm/shared_embedder.hpp"
#include "novelty_host/triage/triage_service.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

namespace novelty::cli {

namespace {

struct ServeArgs {
    host::ServerOptions server;
    std::string token_file;
    double max_wait_ms = 2;
    double header_timeout_s = 10;
    double body_timeout_s = 60;
    bool no_batching = false;
    EmbedderFlags embedder;
    DeviceFlags device;
    host::ClaimsServiceOptions claims;  ///< POST /v1/claims: the flags of `novelty claims`
    bool quiet = false;
    bool no_ui = false;
    bool print_routes = false;  ///< print the route table and exit (docs/openapi.yaml is checked against it)
};

std::string read_token(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw UsageError("--token-file " + path + ": is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError("--token-file " + path + ": cannot read it");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string token = ss.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) token.erase(token.begin());
    if (token.empty()) throw UsageError("--token-file " + path + ": the file holds no token");
    if (token.find_first_of(" \t\r\n") != std::string::npos)
        throw UsageError("--token-file " + path + ": the token must be one word (no spaces or line breaks)");
    return token;
}

/// Where the web page is (docs/ui.md), when it is served.
void print_ui_address(const host::ServerOptions& options, int port) {
    if (!options.ui) return;
    const std::string host = options.host == "::1" ? "[::1]" : options.host;
    const std::string from = options.ui_dir.empty() ? "" : " (files read from " + options.ui_dir + ")";
    std::fprintf(stderr, "novelty serve: the web page: open http://%s:%d/ui/ in a browser%s\n", host.c_str(), port,
                 from.c_str());
}

// The triage job's settings: the claims settings, and the server's backend and threads.
host::TriageServiceOptions triage_options(const host::ServerOptions& server,
                                          const host::ClaimsServiceOptions& claims) {
    host::TriageServiceOptions options;
    options.claims = claims;
    options.backend = server.backend;
    options.threads = server.threads;
    return options;
}

// Serves until SIGINT or SIGTERM (blocked by the caller before the server's threads started).
int serve_until_signalled(host::Server& server, const host::ServerOptions& options, const ServeArgs& args,
                          sigset_t& signals) {
    server.start();
    const bool loopback = options.host == "127.0.0.1" || options.host == "localhost" || options.host == "::1";
    if (!loopback && options.token.empty())
        std::fprintf(stderr, "novelty serve: warning: listening on %s without --token-file: anyone who can reach it "
                             "can use it\n", options.host.c_str());
    std::fprintf(stderr, "novelty serve: %s on http://%s:%d (%s, batches of up to %zu records, %.1f ms wait); "
                         "Ctrl-C stops\n",
                 options.corpus_dir.c_str(), options.host.c_str(), server.port(),
                 options.token.empty() ? "no auth" : "bearer token required", options.max_batch, args.max_wait_ms);
    print_ui_address(options, server.port());
    int received = 0;
    sigwait(&signals, &received);
    std::fprintf(stderr, "novelty serve: %s: finishing %zu request(s) in flight, then stopping\n",
                 received == SIGINT ? "SIGINT" : "SIGTERM", server.in_flight());
    server.stop();
    std::fprintf(stderr, "novelty serve: stopped\n");
    return exit_ok;
}

// The route table, one JSON object a line: {"method", "path" (the routed pattern), "endpoint"}.
int print_routes(const host::Server& server) {
    for (const host::ServedRoute& r : server.routes())
        std::printf("%s\n", nlohmann::ordered_json{{"method", r.method}, {"path", r.pattern}, {"endpoint", r.endpoint}}.dump().c_str());
    return exit_ok;
}

int run_serve(ServeArgs& args) {
    host::ServerOptions options = args.server;
    options.backend = args.device;
    if (!args.token_file.empty()) options.token = read_token(args.token_file);
    if (args.max_wait_ms < 0) throw UsageError("--max-wait-ms must not be negative");
    options.max_wait = std::chrono::microseconds(static_cast<long long>(args.max_wait_ms * 1000));
    if (args.no_batching) options.max_batch = 1;
    options.ui = !args.no_ui;
    options.header_timeout = std::chrono::milliseconds(static_cast<long long>(args.header_timeout_s * 1000));
    options.body_timeout = std::chrono::milliseconds(static_cast<long long>(args.body_timeout_s * 1000));
    options.on_log = [quiet = args.quiet](const std::string& message) {
        if (!quiet) std::fprintf(stderr, "novelty serve: %s\n", message.c_str());
    };

    // The encoder for text records (shared with claims jobs), made now so that a missing model
    // shows at start.
    std::function<std::unique_ptr<Embedder>()> embedder_views;
    {
        EmbedderFlags flags = args.embedder;
        flags.threads = options.threads;
        try {
            const Corpus corpus = Corpus::open(options.corpus_dir);
            embedder_views = host::share_embedder(embedder_for_corpus(corpus, flags));
            options.make_embedder = embedder_views;
        } catch (const CorpusError&) {
            throw;
        } catch (const std::exception& e) {
            if (!args.embedder.spec.empty()) throw;
            std::fprintf(stderr, "novelty serve: warning: no encoder for text records (%s); requests must send vectors "
                                 "or corpus paper ids, and POST /v1/claims is off\n", e.what());
        }
    }
    std::shared_ptr<host::ClaimsService> claims;
    std::shared_ptr<host::TriageService> triage;  // POST /v1/triage, with the claims settings
    if (embedder_views) {
        host::ClaimsServiceOptions claims_options = args.claims;
        claims_options.corpus_dir = options.corpus_dir;
        claims_options.max_proposals = options.max_records;
        claims_options.max_text_bytes = options.max_text_bytes;
        if (claims_options.llm.response_cache == "none") claims_options.llm.response_cache.clear();
        claims = std::make_shared<host::ClaimsService>(claims_options, embedder_views());
        options.on_log(claims->describe());
        triage = std::make_shared<host::TriageService>(triage_options(options, claims_options), embedder_views());
    }

    // SIGINT and SIGTERM are taken by sigwait below; block them before any thread starts.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    host::Server server(options);
    if (claims) host::add_claims_endpoint(server, claims);
    if (triage) host::add_triage_endpoint(server, triage);
    if (args.print_routes) return print_routes(server);
    return serve_until_signalled(server, options, args, signals);
}

/// The flags of POST /v1/claims, named as in `novelty claims`.
void add_claims_flags(CLI::App& serve, ServeArgs& a) {
    host::ClaimsServiceOptions& c = a.claims;
    add_claims_stage_flags(serve, c.llm, c.method, "Claims: ");
    serve.add_option("--cache", c.llm.response_cache,
                     "Claims: LLM response cache (SQLite) outside the corpus; default none");
    serve.add_option("--claims-cache", c.claims_cache,
                     "Claims: pool claim store (SQLite) outside the corpus; default in memory (pool claims are "
                     "extracted once per server run)");
    serve.add_option("--window", c.window, "Claims: proposals in flight at once within a job (default 64)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<ServeArgs>();
    host::ServerOptions& o = a->server;
    CLI::App* serve = app.add_subcommand(
        "serve", "Serve scoring, search and embedding over HTTP (JSON; docs/api.md), batching requests that arrive "
                 "together, until SIGINT or SIGTERM");
    serve->add_option("--corpus", o.corpus_dir, "Corpus directory (with vectors); opened read-only")->required();
    serve->add_option("--host", o.host, "Address to listen on (default 127.0.0.1: this machine only)");
    serve->add_option("--port", o.port, "Port (default 8080; 0 = any free port)")->check(CLI::Range(0, 65535));
    serve->add_option("--token-file", a->token_file,
                      "File holding a bearer token that every request but /healthz must send "
                      "(Authorization: Bearer TOKEN)");
    add_device_flags(serve, a->device);
    serve->add_option("--max-batch", o.max_batch, "Most records per backend call (default 64)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    serve->add_option("--max-wait-ms", a->max_wait_ms,
                      "How long a batch waits for more requests after its first, in ms (default 2)");
    serve->add_flag("--no-batching", a->no_batching, "One request per backend call (same as --max-batch 1)");
    serve->add_option("--max-body", o.max_body_bytes, "Largest request body in bytes (default 16777216)")
        ->check(CLI::NonNegativeNumber);
    serve->add_option("--max-records", o.max_records, "Most ideas, queries or records per request (default 1024)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    serve->add_option("--p", o.default_p, "RND p when a request gives none (default 100)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{2048}));
    serve->add_option("--q", o.default_q, "RND q when a request gives none (default 50)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{2048}));
    serve->add_option("--evidence", o.evidence, "Nearest papers listed per scored idea (default 10)")
        ->check(CLI::NonNegativeNumber);
    serve->add_flag("--include-self", o.include_self,
                    "Count a neighbour paper as its own nearest neighbour in its density (see novelty score)");
    serve->add_option("--threads", o.threads, "Backend threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    serve->add_option("--http-threads", o.http_threads, "Connections served at once (default 64)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
    serve->add_option("--max-connections", o.max_connections,
                      "Connections open at once, served or waiting for a thread; more get 503 (default 256)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    serve->add_option("--header-timeout", a->header_timeout_s,
                      "Seconds a request's line and headers may take to arrive (default 10)")
        ->check(CLI::Range(0.001, 3600.0));
    serve->add_option("--body-timeout", a->body_timeout_s,
                      "Seconds a request's body may take to arrive after its headers (default 60)")
        ->check(CLI::Range(0.001, 3600.0));
    add_embedder_flags(*serve, a->embedder);
    add_claims_flags(*serve, *a);
    serve->add_option("--ui-dir", o.ui_dir,
                      "Serve the web page's files (index.html, app.js, style.css) from this folder, read on each "
                      "request, instead of the copies compiled in (for working on the page; docs/ui.md)");
    serve->add_flag("--no-ui", a->no_ui, "Do not serve the web page at /ui/ (nor the redirect from /)");
    serve->add_flag("-q,--quiet", a->quiet, "No log lines on stderr");
    serve->add_flag("--print-routes", a->print_routes,
                    "Print every operation the server would answer (one JSON object a line: method, path pattern, "
                    "endpoint) and exit without listening");
    serve->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_serve(*a); }); });
}

}  // namespace novelty::cli
