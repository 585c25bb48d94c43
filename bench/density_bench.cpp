// Time to the first scores of a set of ideas with densities on demand (the density store), from
// a corpus whose store may be empty, and a second run of the same ideas (a new scorer, as a later
// process); or today's reference path (`--mode self-join`: a full self-join of each distinct
// cutoff's prefix). Ideas are scored in batches of 256, as `novelty score` does.
//   density_bench CORPUS_DIR IDEAS.npy [--p 100] [--q 50] [--cutoffs none|distinct] [--mode on-demand|self-join]
//                 [--first-year 1995] [--years 30] [--seed 1] [--threads T] [--runs 2]
//                 [--storage f32|bf16|int8]
// --storage: the CPU index's storage (the narrow ones screen on a copy and re-score in float32).
// --cutoffs distinct: idea i gets its own cutoff date, drawn uniformly over --years years from
// --first-year (distinct dates; their row prefixes as the corpus's dates give them).
// Prints one JSON object per run: wall and CPU seconds (from building the index, which packs a narrow
// storage's copy, to the last score), the density counts (served, computed, searches), the
// distinct neighbour rows and (row, prefix) pairs the ideas reached, the store's size, peak RSS.
#include "novelty/corpus/corpus.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/util/dates.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <sys/resource.h>

namespace {

using namespace novelty;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// User + system CPU seconds of this process so far (all threads).
double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

double peak_rss_mb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return -1;
}

struct Args {
    std::string corpus, ideas, cutoffs = "none", mode = "on-demand", storage = "f32";
    std::size_t p = 100, q = 50, threads = 0, runs = 2;
    int first_year = 1995, years = 30;
    unsigned seed = 1;
};

Args parse(int argc, char** argv) {
    Args a;
    a.corpus = argv[1];
    a.ideas = argv[2];
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--p") a.p = std::stoul(value);
        else if (flag == "--q") a.q = std::stoul(value);
        else if (flag == "--cutoffs") a.cutoffs = value;
        else if (flag == "--mode") a.mode = value;
        else if (flag == "--first-year") a.first_year = std::stoi(value);
        else if (flag == "--years") a.years = std::stoi(value);
        else if (flag == "--seed") a.seed = static_cast<unsigned>(std::stoul(value));
        else if (flag == "--threads") a.threads = std::stoul(value);
        else if (flag == "--runs") a.runs = std::stoul(value);
        else if (flag == "--storage") a.storage = value;
        else throw std::runtime_error("unknown flag " + flag);
    }
    return a;
}

/// Per idea its row limit: the whole corpus, or the prefix of a distinct random date.
std::vector<std::size_t> row_limits(const Corpus& corpus, const Args& a, std::size_t n_ideas) {
    std::vector<std::size_t> limits(n_ideas, corpus.size());
    if (a.cutoffs != "distinct") return limits;
    std::mt19937 rng(a.seed);
    std::set<int> days;
    while (days.size() < n_ideas) days.insert(static_cast<int>(rng() % static_cast<unsigned>(a.years * 365)));
    std::vector<int> order(days.begin(), days.end());
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i = 0; i < n_ideas; ++i) {
        const int year = a.first_year + order[i] / 365, day = order[i] % 365;
        const int month = std::min(12, 1 + day / 31 + (day % 31 > 27 ? 1 : 0));
        char text[16];
        std::snprintf(text, sizeof text, "%04d-%02d-%02d", year, month, 1 + day % 28);
        limits[i] = corpus.rows_through(*parse_date(text));
    }
    return limits;
}

void run_once(const Corpus& corpus, const NpyMatrix& ideas, const std::vector<std::size_t>& limits, const Args& a,
              std::size_t run) {
    const auto start = std::chrono::steady_clock::now();  // building a narrow index is part of the run
    const double cpu_start = cpu_seconds();
    auto backend = make_cpu_backend(cpu_options(a.storage));
    backend->tuning.threads = a.threads;
    const auto index = backend->build(VectorView::of(corpus.vectors()));
    ScoreOptions options;
    options.p = a.p;
    options.q = a.q;
    options.densities = a.mode == "self-join" ? DensityMethod::self_join : DensityMethod::on_demand;
    Scorer scorer(corpus, *index, options);
    const std::size_t n = ideas.rows(), dim = ideas.cols();
    std::vector<float> batch;
    std::set<std::int64_t> rows;
    std::set<std::pair<std::int64_t, std::size_t>> pairs;
    std::size_t limited = 0;
    for (std::size_t b = 0; b < n; b += 256) {
        const std::size_t m = std::min<std::size_t>(256, n - b);
        batch.resize(m * dim);
        for (std::size_t i = 0; i < m; ++i) ideas.row_as_f32(b + i, batch.data() + i * dim);
        ScoreInput input{batch.data(), m, dim, {limits.begin() + static_cast<std::ptrdiff_t>(b),
                                                limits.begin() + static_cast<std::ptrdiff_t>(b + m)}, {}, {}};
        const auto scores = scorer.score(input);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t r = 0; r < a.p; ++r) {
                rows.insert(scores[i].neighbor_rows[r]);
                pairs.insert({scores[i].neighbor_rows[r], limits[b + i]});
            }
    }
    const double seconds = seconds_since(start), cpu = cpu_seconds() - cpu_start;
    for (std::size_t limit : limits) limited += limit < corpus.size() ? 1 : 0;
    const DensityCounts& c = scorer.density_counts();
    const DensityStoreStats store = DensityStore(corpus, a.q + 8, false).stats();
    std::printf("{\"run\": %zu, \"mode\": \"%s\", \"storage\": \"%s\", \"cutoffs\": \"%s\", \"corpus_rows\": %zu, \"ideas\": %zu, "
                "\"ideas_with_a_cutoff\": %zu, \"distinct_prefixes\": %zu, \"p\": %zu, \"q\": %zu, \"seconds\": %.2f, "
                "\"cpu_seconds\": %.2f, "
                "\"served\": %zu, \"computed\": %zu, \"searched_with_exclusions\": %zu, \"searches\": %zu, "
                "\"distinct_neighbours\": %zu, \"distinct_neighbour_prefix_pairs\": %zu, "
                "\"store_segments\": %zu, \"store_lists\": %zu, \"store_bytes\": %llu, \"peak_rss_mb\": %.0f}\n",
                run, a.mode.c_str(), a.storage.c_str(), a.cutoffs.c_str(), corpus.size(), n, limited,
                std::set<std::size_t>(limits.begin(), limits.end()).size(), a.p, a.q, seconds, cpu, c.served, c.computed,
                c.searched_with_exclusions, c.searches, rows.size(), pairs.size(), store.segments, store.lists,
                static_cast<unsigned long long>(store.bytes), peak_rss_mb());
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: density_bench CORPUS_DIR IDEAS.npy [--p 100] [--q 50] [--cutoffs none|distinct] "
                             "[--mode on-demand|self-join] [--first-year 1995] [--years 30] [--seed 1] [--threads T] "
                             "[--runs 2] [--storage f32|bf16|int8]\n");
        return 2;
    }
    try {
        const Args a = parse(argc, argv);
        const Corpus corpus = Corpus::open(a.corpus);
        const NpyMatrix ideas = NpyMatrix::open(a.ideas);
        const std::vector<std::size_t> limits = row_limits(corpus, a, ideas.rows());
        for (std::size_t run = 1; run <= a.runs; ++run) run_once(corpus, ideas, limits, a, run);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "density_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
