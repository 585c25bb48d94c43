// RND scoring with the cached neighbour densities against the direct Algorithm 2 of the paper
// (P + 1 k-NN searches per idea), on one corpus directory and a .npy of idea vectors.
//   score_bench CORPUS_DIR IDEAS.npy [--p 100] [--q 50] [--direct-sample 200] [--threads T]
// Prints one JSON object: the cached path's time for the self-join (index) and for scoring all
// ideas, the direct path's time per idea on a sample, ideas per second for both, their ratio,
// whether the sample's scores are identical, and peak memory.
#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/scoring/scoring.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_rss_mb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return -1;
}

// Algorithm 2, directly: the idea's max(P, Q) nearest, then each of its P nearest papers' own Q
// nearest (itself left out), all searched, none cached.
double direct_rnd(novelty::SearchIndex& index, const novelty::NpyMatrix& vectors,
                  const float* idea, std::size_t p, std::size_t q) {
    const std::size_t dim = index.dim();
    const novelty::TopK top = index.search(novelty::SearchQueries{idea, 1, dim}, std::max(p, q));
    double nd_idea = 0;
    for (std::size_t r = 0; r < q; ++r) nd_idea += 1.0 - top.sim(0, r);
    nd_idea /= static_cast<double>(q);
    std::vector<float> neighbors(p * dim);
    novelty::SearchQueries batch{neighbors.data(), p, dim};
    for (std::size_t j = 0; j < p; ++j) {
        vectors.row_as_f32(static_cast<std::size_t>(top.row(0, j)), neighbors.data() + j * dim);
        batch.scope.excluded.add({top.row(0, j)});
    }
    const novelty::TopK theirs = index.search(batch, q);
    std::size_t at_most = 0;
    for (std::size_t j = 0; j < p; ++j) {
        double nd = 0;
        for (std::size_t r = 0; r < q; ++r) nd += 1.0 - theirs.sim(j, r);
        at_most += nd / static_cast<double>(q) <= nd_idea;
    }
    return 100.0 * static_cast<double>(at_most) / static_cast<double>(p);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: score_bench CORPUS_DIR IDEAS.npy [--p 100] [--q 50] [--direct-sample 200] [--threads T]\n");
        return 2;
    }
    std::size_t p = 100, q = 50, sample = 200, threads = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const std::size_t value = std::stoul(argv[i + 1]);
        if (flag == "--p") p = value;
        else if (flag == "--q") q = value;
        else if (flag == "--direct-sample") sample = value;
        else if (flag == "--threads") threads = value;
    }
    try {
        const novelty::Corpus corpus = novelty::Corpus::open(argv[1]);
        const novelty::NpyMatrix ideas = novelty::NpyMatrix::open(argv[2]);
        auto backend = novelty::make_cpu_backend();
        backend->tuning.threads = threads;
        const auto view = novelty::VectorView::of(corpus.vectors());
        const std::size_t n = ideas.rows(), dim = ideas.cols();
        std::vector<float> idea_vectors(n * dim);
        for (std::size_t i = 0; i < n; ++i) ideas.row_as_f32(i, idea_vectors.data() + i * dim);

        // Cached path: the self-join once (novelty index), then one search per idea.
        auto start = std::chrono::steady_clock::now();
        bool cached = false;
        auto index = backend->build(view);
        novelty::cached_self_join(corpus, *index, corpus.size(), q, q + novelty::default_extra_neighbors, {}, &cached);
        const double index_seconds = seconds_since(start);
        novelty::Scorer scorer(corpus, *index, novelty::ScoreOptions{p, q});
        start = std::chrono::steady_clock::now();
        const auto scores = scorer.score(novelty::ScoreInput{idea_vectors.data(), n, dim, {}, {}});
        const double score_seconds = seconds_since(start);

        // Direct path on a sample of the ideas.
        sample = std::min(sample, n);
        std::size_t identical = 0;
        start = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < sample; ++i)
            identical += direct_rnd(*index, corpus.vectors(), idea_vectors.data() + i * dim, p, q) == scores[i].rnd;
        const double direct_seconds = seconds_since(start);

        const double cached_rate = n / score_seconds, direct_rate = sample / direct_seconds;
        std::printf("{\"corpus\": %zu, \"ideas\": %zu, \"dim\": %zu, \"p\": %zu, \"q\": %zu, \"index_seconds\": %.2f, "
                    "\"index_was_cached\": %s, \"score_seconds\": %.2f, \"cached_ideas_per_second\": %.1f, "
                    "\"direct_sample\": %zu, \"direct_seconds\": %.2f, \"direct_ideas_per_second\": %.2f, "
                    "\"ratio\": %.1f, \"ratio_with_index\": %.1f, \"identical_scores\": \"%zu/%zu\", \"peak_rss_mb\": %.0f}\n",
                    corpus.size(), n, dim, p, q, index_seconds, cached ? "true" : "false", score_seconds, cached_rate, sample,
                    direct_seconds, direct_rate, cached_rate / direct_rate,
                    (n / (score_seconds + index_seconds)) / direct_rate, identical, sample, peak_rss_mb());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "score_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
