// HTTP server throughput and latency: an in-process server on loopback, C concurrent clients
// each sending single-idea requests (a corpus paper's vector plus noise) until N requests are
// answered; requests per second and p50/p99 latency, with batching on and off. Run through
// bench/run_serve_bench.sh. Usage:
//   serve_bench CORPUS_DIR [--endpoint score|search] [--requests N] [--clients 1,16,64] [--p 100] [--q 50]
#include "novelty/corpus/corpus.hpp"
#include "novelty_host/server/server.hpp"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Args {
    std::string corpus;
    std::string endpoint = "score";
    std::size_t requests = 2000;
    std::vector<std::size_t> clients{1, 16, 64};
    std::size_t p = 100, q = 50;
};

// Request bodies: one idea each, near a corpus paper.
std::vector<std::string> make_bodies(const novelty::Corpus& corpus, const Args& args, std::size_t n) {
    const auto& vectors = corpus.vectors();
    const std::size_t dim = vectors.cols();
    std::mt19937 rng(5);
    std::normal_distribution<float> noise(0.f, 0.05f);
    std::vector<float> v(dim);
    std::vector<std::string> bodies;
    for (std::size_t i = 0; i < n; ++i) {
        vectors.row_as_f32(rng() % vectors.rows(), v.data());
        std::ostringstream out;
        out << (args.endpoint == "score" ? "{\"ideas\":[{\"id\":\"b" : "{\"queries\":[{\"id\":\"b") << i << "\",\"vector\":[";
        for (std::size_t c = 0; c < dim; ++c) out << (c ? "," : "") << v[c] + noise(rng);
        out << "]}]";
        if (args.endpoint == "score") out << ",\"p\":" << args.p << ",\"q\":" << args.q << "}";
        else out << ",\"k\":10}";
        bodies.push_back(out.str());
    }
    return bodies;
}

struct Result {
    double seconds = 0;
    std::vector<double> latency_ms;
    std::size_t errors = 0;
};

Result drive(int port, const std::string& path, const std::vector<std::string>& bodies, std::size_t n_clients,
             std::size_t n_requests) {
    Result result;
    std::atomic<std::size_t> next{0}, errors{0};
    std::vector<std::vector<double>> per_client(n_clients);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < n_clients; ++c)
        threads.emplace_back([&, c] {
            httplib::Client client("127.0.0.1", port);
            client.set_read_timeout(120, 0);
            for (std::size_t i = next++; i < n_requests; i = next++) {
                const auto t0 = std::chrono::steady_clock::now();
                auto res = client.Post(path.c_str(), bodies[i % bodies.size()], "application/json");
                const auto t1 = std::chrono::steady_clock::now();
                if (!res || res->status != 200) ++errors;
                per_client[c].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            }
        });
    for (auto& t : threads) t.join();
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (auto& l : per_client) result.latency_ms.insert(result.latency_ms.end(), l.begin(), l.end());
    std::sort(result.latency_ms.begin(), result.latency_ms.end());
    result.errors = errors;
    return result;
}

double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return NAN;
    const std::size_t at = std::min(sorted.size() - 1, static_cast<std::size_t>(std::ceil(p * sorted.size())) - 1);
    return sorted[at];
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    if (argc < 2) {
        std::fprintf(stderr, "usage: serve_bench CORPUS_DIR [--endpoint score|search] [--requests N] [--clients 1,16,64] [--p P] [--q Q]\n");
        return 2;
    }
    args.corpus = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--endpoint") args.endpoint = value;
        else if (flag == "--requests") args.requests = std::stoul(value);
        else if (flag == "--p") args.p = std::stoul(value);
        else if (flag == "--q") args.q = std::stoul(value);
        else if (flag == "--clients") {
            args.clients.clear();
            std::stringstream ss(value);
            for (std::string c; std::getline(ss, c, ',');) args.clients.push_back(std::stoul(c));
        } else {
            std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    const novelty::Corpus corpus = novelty::Corpus::open(args.corpus);
    const auto bodies = make_bodies(corpus, args, 512);
    const std::string path = "/v1/" + args.endpoint;
    std::printf("endpoint %s, corpus %zu x %zu, %zu requests per run, one idea per request%s\n", path.c_str(),
                corpus.size(), corpus.manifest().dim, args.requests,
                args.endpoint == "score" ? (", p=" + std::to_string(args.p) + " q=" + std::to_string(args.q)).c_str() : "");
    std::printf("%-9s %8s %10s %9s %9s %12s %7s\n", "batching", "clients", "req/s", "p50 ms", "p99 ms", "calls/req", "errors");
    for (const bool batching : {true, false}) {
        novelty::host::ServerOptions options;
        options.corpus_dir = args.corpus;
        options.port = 0;
        options.http_threads = 72;
        options.max_batch = batching ? 64 : 1;
        options.max_wait = std::chrono::microseconds(2000);
        novelty::host::Server server(options);
        server.start();
        drive(server.port(), path, bodies, 4, 64);  // warm-up: caches, densities, connections
        for (std::size_t n_clients : args.clients) {
            const auto before = server.batch_counts();
            const Result r = drive(server.port(), path, bodies, n_clients, args.requests);
            const auto after = server.batch_counts();
            const std::size_t calls = args.endpoint == "score" ? after.score_calls - before.score_calls
                                                               : after.search_calls - before.search_calls;
            std::printf("%-9s %8zu %10.1f %9.2f %9.2f %12.3f %7zu\n", batching ? "on" : "off", n_clients,
                        static_cast<double>(args.requests) / r.seconds, percentile(r.latency_ms, 0.50),
                        percentile(r.latency_ms, 0.99), static_cast<double>(calls) / static_cast<double>(args.requests),
                        r.errors);
            std::fflush(stdout);
        }
        server.stop();
    }
    return 0;
}
