// Times novelty's dedup in-process on generated ideas, for bench/run_dedup_bench.sh.
//   dedup_bench --n N --dim D [--dup-fraction F] [--threads T] [--first-k K] [--write FILE.npy]
// The ideas: random unit vectors, a share of them replaced by near-copies (cosine about 0.9) of
// another, in groups of 2 to 8, some of them chains. Prints one JSON object: shapes, seconds for
// the dedup and for a plain self-join with k = 1 (the same matrix products, the floor), clusters,
// extra rounds, peak resident memory. With --write, saves the vectors for an end-to-end CLI run.
#include "novelty/scoring/dedup.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/search/search.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

double peak_rss_mb() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return -1;
}

void normalise(float* v, std::size_t dim) {
    double sum = 0;
    for (std::size_t c = 0; c < dim; ++c) sum += double(v[c]) * v[c];
    for (std::size_t c = 0; c < dim; ++c) v[c] = static_cast<float>(v[c] / std::sqrt(sum));
}

std::vector<float> generate(std::size_t n, std::size_t dim, double dup_fraction, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::uniform_real_distribution<double> unit;
    std::uniform_int_distribution<int> group(2, 8);
    std::vector<float> x(n * dim);
    // Noise of norm ~0.48 on a unit vector: cosine ~0.9 to the vector it copies.
    const float noise = 0.48f / std::sqrt(float(dim));
    for (std::size_t i = 0; i < n;) {
        for (std::size_t c = 0; c < dim; ++c) x[i * dim + c] = normal(rng);
        normalise(x.data() + i * dim, dim);
        const std::size_t base = i++;
        if (unit(rng) >= dup_fraction / (1 - dup_fraction) / 4) continue;
        const bool chain = unit(rng) < 0.3;
        for (int g = group(rng); g > 1 && i < n; --g, ++i) {
            const std::size_t from = chain ? i - 1 : base;
            for (std::size_t c = 0; c < dim; ++c) x[i * dim + c] = x[from * dim + c] + noise * normal(rng);
            normalise(x.data() + i * dim, dim);
        }
    }
    return x;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 100000, dim = 384, threads = 0, first_k = 32;
    double dup_fraction = 0.3;
    std::string write;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--n") n = std::stoul(value);
        else if (flag == "--dim") dim = std::stoul(value);
        else if (flag == "--dup-fraction") dup_fraction = std::stod(value);
        else if (flag == "--threads") threads = std::stoul(value);
        else if (flag == "--first-k") first_k = std::stoul(value);
        else if (flag == "--write") write = value;
        else {
            std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
            return 2;
        }
    }
    const std::vector<float> x = generate(n, dim, dup_fraction, 42);
    if (!write.empty()) novelty::write_npy(write, novelty::DType::f32, n, dim, x.data());
    auto backend = novelty::make_cpu_backend();
    backend->tuning.threads = threads;
    novelty::DedupOptions options;
    options.first_k = first_k;
    auto start = std::chrono::steady_clock::now();
    const novelty::DedupResult result = novelty::dedup_ideas(*backend, x.data(), n, dim, {}, options);
    const double dedup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    start = std::chrono::steady_clock::now();
    const novelty::SelfJoin join = backend->build(novelty::VectorView::of(x, dim))->self_join(n, 1, 1);
    const double floor_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::size_t multi = 0;
    for (std::size_t size : result.cluster_size) multi += size > 1;
    std::printf("{\"n\": %zu, \"dim\": %zu, \"first_k\": %zu, \"dedup_s\": %.3f, \"selfjoin_k1_s\": %.3f, "
                "\"clusters\": %zu, \"clusters_of_2_or_more\": %zu, \"extra_rounds\": %zu, \"peak_rss_mb\": %.0f}\n",
                n, dim, first_k, dedup_s, floor_s, result.representative.size(), multi, result.extra_rounds,
                peak_rss_mb());
    return join.n_rows == n ? 0 : 1;
}
