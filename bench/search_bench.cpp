// Times the CPU backend in-process on .npy inputs, for bench/cpu_search_vs_faiss.py.
//   search_bench search   --corpus C.npy --queries Q.npy --k K [--threads T] [--storage f32|bf16|int8] [--out PREFIX]
//   search_bench selfjoin --corpus C.npy --q Q [--threads T] [--storage f32|bf16|int8] [--out PREFIX]
// The timed part builds the index (with bf16 storage: packs the rows) and runs the call.
// Prints one JSON object: shapes, seconds, rate, peak resident memory, and the resident memory
// at the end while the index is alive, split into anonymous memory (the index's own: tiles,
// collectors, the bf16 copy) and file-backed pages (the memory-mapped corpus rows, which the
// kernel can drop and re-read). With --out, writes the
// neighbour rows (int64) and similarities (float32) as raw little-endian files PREFIX.rows and
// PREFIX.sims (and PREFIX.density for the self-join) for the script to compare.
#include "novelty/io/npy.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/search/search.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

void write_raw(const std::string& path, const void* data, std::size_t bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

// Peak resident memory of this process image (VmHWM). Not getrusage: its ru_maxrss carries the
// parent's peak across fork and exec.
double peak_rss_mb() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return -1;
}

// A field of /proc/self/status in MB (RssAnon, RssFile), -1 when absent.
double status_mb(const std::string& field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) / 1024.0;
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: search_bench search|selfjoin --corpus C.npy [--queries Q.npy --k K] [--q Q] [--threads T] [--out PREFIX]\n");
        return 2;
    }
    const std::string mode = argv[1];
    std::string corpus_path, queries_path, out, storage = "f32";
    std::size_t k = 100, q = 50, threads = 0, query_tile = 0, corpus_tile = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--corpus") corpus_path = value;
        else if (flag == "--queries") queries_path = value;
        else if (flag == "--k") k = std::stoul(value);
        else if (flag == "--q") q = std::stoul(value);
        else if (flag == "--threads") threads = std::stoul(value);
        else if (flag == "--out") out = value;
        else if (flag == "--storage") storage = value;
        else if (flag == "--query-tile") query_tile = std::stoul(value);
        else if (flag == "--corpus-tile") corpus_tile = std::stoul(value);
        else {
            std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    try {
        const novelty::NpyMatrix corpus = novelty::NpyMatrix::open(corpus_path);
        novelty::CpuBackendOptions options;
        options.storage = novelty::parse_cpu_storage(storage);
        auto backend = novelty::make_cpu_backend(options);
        backend->tuning.threads = threads;
        backend->tuning.query_tile = query_tile;
        backend->tuning.corpus_tile = corpus_tile;
        const auto view = novelty::VectorView::of(corpus);
        if (mode == "search") {
            const novelty::NpyMatrix queries = novelty::NpyMatrix::open(queries_path);
            const auto* data = static_cast<const float*>(queries.data());
            novelty::SearchQueries batch{data, queries.rows(), queries.cols()};
            const auto start = std::chrono::steady_clock::now();
            const auto index = backend->build(view);
            const novelty::TopK top = index->search(batch, k);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const double anon = status_mb("RssAnon"), file = status_mb("RssFile");
            if (!out.empty()) {
                write_raw(out + ".rows", top.rows.data(), top.rows.size() * sizeof(std::int64_t));
                write_raw(out + ".sims", top.sims.data(), top.sims.size() * sizeof(float));
            }
            std::printf("{\"mode\": \"search\", \"n_corpus\": %zu, \"n_queries\": %zu, \"dim\": %zu, \"k\": %zu, "
                        "\"seconds\": %.4f, \"per_second\": %.2f, \"peak_rss_mb\": %.1f, \"rss_anon_mb\": %.1f, "
                        "\"rss_file_mb\": %.1f, \"storage\": \"%s\"}\n",
                        corpus.rows(), queries.rows(), corpus.cols(), k, seconds, queries.rows() / seconds, peak_rss_mb(),
                        anon, file, storage.c_str());
        } else if (mode == "selfjoin") {
            const auto start = std::chrono::steady_clock::now();
            const auto index = backend->build(view);
            const novelty::SelfJoin join = index->self_join(corpus.rows(), q, q);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const double anon = status_mb("RssAnon"), file = status_mb("RssFile");
            if (!out.empty()) {
                write_raw(out + ".rows", join.rows.data(), join.rows.size() * sizeof(std::int64_t));
                write_raw(out + ".sims", join.sims.data(), join.sims.size() * sizeof(float));
                write_raw(out + ".density", join.density.data(), join.density.size() * sizeof(float));
            }
            std::printf("{\"mode\": \"selfjoin\", \"n_corpus\": %zu, \"dim\": %zu, \"q\": %zu, \"seconds\": %.4f, "
                        "\"per_second\": %.2f, \"peak_rss_mb\": %.1f, \"rss_anon_mb\": %.1f, \"rss_file_mb\": %.1f, "
                        "\"storage\": \"%s\"}\n",
                        corpus.rows(), corpus.cols(), q, seconds, corpus.rows() / seconds, peak_rss_mb(), anon, file,
                        storage.c_str());
        } else {
            std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
            return 2;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "search_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
