// Times the CUDA backend on random unit vectors, for bench/device_check.sh. Runs on a GPU
// machine; prints one JSON object per measurement on stdout.
//   cuda_search_bench gemm-rate                          cuBLAS bf16 rate (8192^3, TFLOP/s)
//   cuda_search_bench search --rows N --queries Q --dim D --k K [--storage f16] [--reps R] [--profile F]
//                            [--tiles f32,f16] [--check C]
//   cuda_search_bench selfjoin --rows N --dim D --q Q [--k-stored K] [--storage f16] [--tiles f32,f16]
//   cuda_search_bench sweep --rows N --queries Q --dim D --k K --variants A:O:QT:CT,...  (tuning)
// Vectors are generated on the host (normal approximated by a sum of four uniforms, then
// L2-normalised) and held as float16, as a corpus's vectors.npy would be. Search times include
// copying queries in and results out and the host's final ordering; the corpus upload is done
// by an untimed warm-up call and reported separately. --profile F adds one call on a fresh
// backend with NOVELTY_CUDA_PROFILE=F and prints its time per phase ({"mode": "profile"}).
// --tiles times each similarity tile type (CudaBackendOptions::similarity_tile; docs/cuda.md) on
// the same data, one JSON line each with "tile". --check C compares each tile type's result for
// the first C queries with the CPU backend's on the same float16 corpus ({"mode": "check"}):
// the share of ranks, among those whose CPU similarities are apart by more than 1e-6 from their
// neighbours', that name the CPU's row, and the largest similarity difference.
#include "novelty/search/backends.hpp"
#include "novelty/util/half.hpp"
#include "novelty/search/search.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

/// The last non-empty line of a text file ("null" when there is none).
std::string last_line(const std::string& path) {
    std::ifstream in(path);
    std::string line, last = "null";
    while (std::getline(in, line))
        if (!line.empty()) last = line;
    return last;
}

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// n x dim unit rows (float16 bits), generated with one xorshift stream per thread.
std::vector<std::uint16_t> random_half_rows(std::size_t n, std::size_t dim, std::uint64_t seed) {
    std::vector<std::uint16_t> out(n * dim);
    const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + t + 1;
            auto next = [&] {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                return static_cast<float>(state >> 40) * (1.0f / 16777216.0f);
            };
            std::vector<float> row(dim);
            for (std::size_t r = t; r < n; r += threads) {
                double norm = 0;
                for (auto& v : row) {
                    v = next() + next() + next() + next() - 2.0f;
                    norm += double(v) * v;
                }
                const float inv = static_cast<float>(1.0 / std::sqrt(norm));
                for (std::size_t c = 0; c < dim; ++c) out[r * dim + c] = novelty::float_to_half(row[c] * inv);
            }
        });
    }
    for (auto& th : pool) th.join();
    return out;
}

std::vector<float> to_float(const std::vector<std::uint16_t>& half) {
    std::vector<float> out(half.size());
    for (std::size_t i = 0; i < half.size(); ++i) out[i] = novelty::half_to_float(half[i]);
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

#define CHECK_CUDA(call)                                                                   \
    do {                                                                                   \
        if ((call) != cudaSuccess) {                                                       \
            std::fprintf(stderr, "CUDA failure: %s\n", #call);                             \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

/// cuBLAS bf16 x bf16 -> float32 GEMM at 8192^3 on random data: median TFLOP/s of 10 after 3 warm-ups.
double gemm_rate() {
    const int n = 8192;
    const std::size_t count = std::size_t(n) * n;
    void *a, *b, *c;
    CHECK_CUDA(cudaMalloc(&a, count * 2));
    CHECK_CUDA(cudaMalloc(&b, count * 2));
    CHECK_CUDA(cudaMalloc(&c, count * 4));
    std::vector<std::uint16_t> host(count);
    std::uint32_t state = 12345;
    for (auto& v : host) {  // bfloat16 bits of values in [-1, 1)
        state = state * 1664525u + 1013904223u;
        const float f = (state >> 8) * (2.0f / 16777216.0f) - 1.0f;
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        v = static_cast<std::uint16_t>(bits >> 16);
    }
    CHECK_CUDA(cudaMemcpy(a, host.data(), count * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(b, host.data(), count * 2, cudaMemcpyHostToDevice));
    cublasHandle_t handle;
    cublasCreate(&handle);
    const float alpha = 1, beta = 0;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<double> rates;
    for (int rep = 0; rep < 13; ++rep) {
        cudaEventRecord(start);
        cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &beta, c,
                     CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        if (rep >= 3) rates.push_back(2.0 * n * double(n) * n / (ms * 1e-3) / 1e12);
    }
    cublasDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return median(rates);
}

/// Times search variants on one generated corpus: `variants` is a comma-separated list of
/// ALGO:OVERLAP:QUERY_TILE:CORPUS_TILE (RAFT SelectAlgo number or 0 for its heuristic; 0 or 1;
/// tile sizes, 0 for the backend's choice).
int sweep(std::size_t rows, std::size_t queries, std::size_t dim, std::size_t k, std::size_t reps,
          const std::string& storage, const std::string& variants) {
    const auto corpus_half = random_half_rows(rows, dim, 1);
    const novelty::VectorView corpus{corpus_half.data(), novelty::DType::f16, rows, dim};
    const auto query_values = to_float(random_half_rows(queries, dim, 2));
    novelty::SearchQueries all;
    all.vectors = query_values.data();
    all.n_queries = queries;
    all.dim = dim;
    novelty::SearchQueries one = all;
    one.n_queries = 1;
    std::size_t begin = 0;
    while (begin < variants.size()) {
        std::size_t end = variants.find(',', begin);
        if (end == std::string::npos) end = variants.size();
        const std::string variant = variants.substr(begin, end - begin);
        begin = end + 1;
        unsigned algo = 0, overlap = 1;
        std::size_t query_tile = 0, corpus_tile = 0;
        if (std::sscanf(variant.c_str(), "%u:%u:%zu:%zu", &algo, &overlap, &query_tile, &corpus_tile) != 4)
            throw std::runtime_error("bad variant '" + variant + "'");
        setenv("NOVELTY_CUDA_SELECT_ALGO", std::to_string(algo).c_str(), 1);
        setenv("NOVELTY_CUDA_OVERLAP", std::to_string(overlap).c_str(), 1);
        novelty::CudaBackendOptions options;
        options.storage = novelty::parse_storage(storage);
        auto backend = novelty::make_cuda_backend(options);
        backend->tuning.query_tile = query_tile;
        backend->tuning.corpus_tile = corpus_tile;
        auto index = backend->build(corpus);
        index->search(one, k);
        std::vector<double> times;
        for (std::size_t rep = 0; rep < reps; ++rep) {
            const auto start = clock_type::now();
            index->search(all, k);
            times.push_back(seconds_since(start));
        }
        std::printf("{\"mode\": \"sweep\", \"variant\": \"%s\", \"rows\": %zu, \"queries\": %zu, \"seconds\": %.4f, "
                    "\"min_s\": %.4f, \"max_s\": %.4f}\n",
                    variant.c_str(), rows, queries, median(times), *std::min_element(times.begin(), times.end()),
                    *std::max_element(times.begin(), times.end()));
        std::fflush(stdout);
    }
    return 0;
}

/// The comma-separated items of `list`.
std::vector<std::string> split(const std::string& list) {
    std::vector<std::string> out;
    std::size_t begin = 0;
    while (begin <= list.size()) {
        std::size_t end = list.find(',', begin);
        if (end == std::string::npos) end = list.size();
        if (end > begin) out.push_back(list.substr(begin, end - begin));
        begin = end + 1;
    }
    return out;
}

/// Prints how far `got` is from the CPU's `want` (the first want.n_queries queries of got).
void print_check(const novelty::TopK& got, const novelty::TopK& want, std::size_t rows, const std::string& tile) {
    std::size_t apart = 0, same = 0;
    double max_diff = 0;
    for (std::size_t i = 0; i < want.n_queries; ++i)
        for (std::size_t r = 0; r < want.count[i]; ++r) {
            max_diff = std::max(max_diff, double(std::fabs(got.sim(i, r) - want.sim(i, r))));
            const bool left = r == 0 || want.sim(i, r - 1) - want.sim(i, r) > 1e-6f;
            const bool right = r + 1 == want.count[i] || want.sim(i, r) - want.sim(i, r + 1) > 1e-6f;
            if (!(left && right)) continue;
            ++apart;
            same += got.row(i, r) == want.row(i, r);
        }
    std::printf("{\"mode\": \"check\", \"rows\": %zu, \"tile\": \"%s\", \"check_queries\": %zu, \"apart_ranks\": %zu, "
                "\"rows_equal_share\": %.6f, \"max_sim_diff\": %.3e}\n",
                rows, tile.c_str(), want.n_queries, apart, apart ? double(same) / apart : 1.0, max_diff);
    std::fflush(stdout);
}

/// A backend for one similarity tile type, with the tile sizes asked for.
std::unique_ptr<novelty::SearchBackend> bench_backend(const std::string& storage, const std::string& tile,
                                                      std::size_t query_tile, std::size_t corpus_tile) {
    novelty::CudaBackendOptions options;
    options.storage = novelty::parse_storage(storage);
    options.similarity_tile = novelty::parse_storage(tile);
    auto backend = novelty::make_cuda_backend(options);
    backend->tuning.query_tile = query_tile;
    backend->tuning.corpus_tile = corpus_tile;
    return backend;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: cuda_search_bench gemm-rate|search|selfjoin [flags]\n");
        return 2;
    }
    const std::string mode = argv[1];
    std::size_t rows = 1000000, queries = 50000, dim = 1024, k = 100, q = 50, k_stored = 0, reps = 3;
    std::size_t query_tile = 0, corpus_tile = 0;
    std::string variants;
    std::string storage = "f16";
    std::string profile_path;
    std::string tiles = "f32";
    std::size_t check = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--rows") rows = std::stoul(value);
        else if (flag == "--queries") queries = std::stoul(value);
        else if (flag == "--dim") dim = std::stoul(value);
        else if (flag == "--k") k = std::stoul(value);
        else if (flag == "--q") q = std::stoul(value);
        else if (flag == "--k-stored") k_stored = std::stoul(value);
        else if (flag == "--reps") reps = std::stoul(value);
        else if (flag == "--storage") storage = value;
        else if (flag == "--variants") variants = value;
        else if (flag == "--query-tile") query_tile = std::stoul(value);
        else if (flag == "--corpus-tile") corpus_tile = std::stoul(value);
        else if (flag == "--profile") profile_path = value;
        else if (flag == "--tiles") tiles = value;
        else if (flag == "--check") check = std::stoul(value);
        else {
            std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    try {
        if (mode == "gemm-rate") {
            std::printf("{\"mode\": \"gemm-rate\", \"bf16_tflops\": %.1f}\n", gemm_rate());
            return 0;
        }
        if (mode == "sweep") return sweep(rows, queries, dim, k, reps, storage, variants);
        if (mode != "search" && mode != "selfjoin") {
            std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
            return 2;
        }
        const char* algo = std::getenv("NOVELTY_CUDA_SELECT_ALGO");
        const char* overlap = std::getenv("NOVELTY_CUDA_OVERLAP");
        const std::string variant = std::string("algo=") + (algo ? algo : "auto") + " overlap=" + (overlap ? overlap : "1") +
                                    " qt=" + std::to_string(query_tile) + " ct=" + std::to_string(corpus_tile);
        auto start = clock_type::now();
        const auto corpus_half = random_half_rows(rows, dim, 1);
        const double generate_s = seconds_since(start);
        const novelty::VectorView corpus{corpus_half.data(), novelty::DType::f16, rows, dim};
        if (mode == "search") {
            const auto query_values = to_float(random_half_rows(queries, dim, 2));
            novelty::SearchQueries all;
            all.vectors = query_values.data();
            all.n_queries = queries;
            all.dim = dim;
            novelty::SearchQueries one = all;
            one.n_queries = 1;
            novelty::SearchQueries checked = all;
            checked.n_queries = std::min(check, queries);
            novelty::TopK cpu_top;
            if (check > 0) cpu_top = novelty::make_cpu_backend()->build(corpus)->search(checked, k);
            for (const std::string& tile : split(tiles)) {
                auto backend = bench_backend(storage, tile, query_tile, corpus_tile);
                auto index = backend->build(corpus);
                start = clock_type::now();
                index->search(one, k);  // uploads the corpus
                const double upload_s = seconds_since(start);
                std::vector<double> times;
                novelty::TopK top;
                for (std::size_t rep = 0; rep < reps; ++rep) {
                    start = clock_type::now();
                    top = index->search(all, k);
                    times.push_back(seconds_since(start));
                    if (top.count[0] != k) throw std::runtime_error("short result");
                }
                const double s = median(times);
                std::printf("{\"mode\": \"search\", \"variant\": \"%s\", \"tile\": \"%s\", \"rows\": %zu, \"queries\": %zu, "
                            "\"dim\": %zu, \"k\": %zu, \"storage\": \"%s\", \"generate_s\": %.3f, \"upload_s\": %.3f, "
                            "\"seconds\": %.4f, \"min_s\": %.4f, \"max_s\": %.4f, \"queries_per_s\": %.1f}\n",
                            variant.c_str(), tile.c_str(), rows, queries, dim, k, storage.c_str(), generate_s, upload_s, s,
                            *std::min_element(times.begin(), times.end()), *std::max_element(times.begin(), times.end()),
                            queries / s);
                std::fflush(stdout);
                if (check > 0) print_check(top, cpu_top, rows, tile);
                if (!profile_path.empty()) {
                    // One more call on a fresh index that records its phases (cuda/phase_profile.hpp);
                    // kept out of the timed calls above.
                    index.reset();
                    ::setenv("NOVELTY_CUDA_PROFILE", profile_path.c_str(), 1);
                    index = backend->build(corpus);
                    index->search(one, k);
                    start = clock_type::now();
                    index->search(all, k);
                    const double profiled_s = seconds_since(start);
                    ::unsetenv("NOVELTY_CUDA_PROFILE");
                    std::printf("{\"mode\": \"profile\", \"tile\": \"%s\", \"rows\": %zu, \"queries\": %zu, \"seconds\": %.4f, "
                                "\"phases\": %s}\n",
                                tile.c_str(), rows, queries, profiled_s, last_line(profile_path).c_str());
                    std::fflush(stdout);
                }
            }
        } else {
            if (k_stored == 0) k_stored = q;
            std::vector<float> one_query(dim, 0.0f);
            one_query[0] = 1.0f;
            novelty::SearchQueries one;
            one.vectors = one_query.data();
            one.n_queries = 1;
            one.dim = dim;
            for (const std::string& tile : split(tiles)) {
                auto index = bench_backend(storage, tile, query_tile, corpus_tile)->build(corpus);
                start = clock_type::now();
                index->search(one, 1);  // uploads the corpus
                const double upload_s = seconds_since(start);
                start = clock_type::now();
                const novelty::SelfJoin join = index->self_join(rows, q, k_stored);
                const double s = seconds_since(start);
                double mean_density = 0;
                for (float d : join.density) mean_density += d;
                std::printf("{\"mode\": \"selfjoin\", \"variant\": \"%s\", \"tile\": \"%s\", \"rows\": %zu, \"dim\": %zu, "
                            "\"q\": %zu, \"k_stored\": %zu, \"storage\": \"%s\", \"generate_s\": %.3f, \"upload_s\": %.3f, "
                            "\"seconds\": %.3f, \"mean_density\": %.6f}\n",
                            variant.c_str(), tile.c_str(), rows, dim, q, k_stored, storage.c_str(), generate_s, upload_s, s,
                            mean_density / rows);
                std::fflush(stdout);
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cuda_search_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
