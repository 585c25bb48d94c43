// Queries per second of date-cutoff retrieval: dense, BM25 and hybrid (RRF of both), on one
// corpus directory.
//   retrieval_bench CORPUS_DIR [--queries 200] [--k 100] [--fusion-depth 1000] [--dim 384] [--threads T]
// Queries are the titles of papers drawn at random (fixed seed) from the corpus, each with its
// own paper's publication date as the cutoff (its row as the prefix, itself excluded), as when
// retrieving the prior work of a paper. BM25 runs on the corpus's real text. Dense uses the
// corpus's vectors when it has them; otherwise random unit vectors of --dim dimensions for the
// corpus and the queries (timing only: the rankings mean nothing). Prints one JSON object.
#include "novelty/corpus/corpus.hpp"
#include "novelty/retrieval/retrieval.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<float> random_unit_rows(std::size_t n, std::size_t dim, std::mt19937_64& rng) {
    std::normal_distribution<float> normal;
    std::vector<float> v(n * dim);
    for (std::size_t r = 0; r < n; ++r) {
        double norm = 0;
        for (std::size_t c = 0; c < dim; ++c) {
            v[r * dim + c] = normal(rng);
            norm += double(v[r * dim + c]) * v[r * dim + c];
        }
        for (std::size_t c = 0; c < dim; ++c) v[r * dim + c] = static_cast<float>(v[r * dim + c] / std::sqrt(norm));
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: retrieval_bench CORPUS_DIR [--queries N] [--k K] [--fusion-depth D] [--dim D] [--threads T]\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::size_t n_queries = 200, k = 100, depth = 1000, dim = 384, threads = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::size_t value = std::stoull(argv[i + 1]);
        if (!std::strcmp(argv[i], "--queries")) n_queries = value;
        else if (!std::strcmp(argv[i], "--k")) k = value;
        else if (!std::strcmp(argv[i], "--fusion-depth")) depth = value;
        else if (!std::strcmp(argv[i], "--dim")) dim = value;
        else if (!std::strcmp(argv[i], "--threads")) threads = value;
        else {
            std::fprintf(stderr, "unknown flag %s\n", argv[i]);
            return 2;
        }
    }
    using namespace novelty;
    const Corpus corpus = Corpus::open(dir);
    const std::size_t n = corpus.size();
    std::mt19937_64 rng(11);

    // Queries: random dated papers; cutoff = their own row (exclusive), so the prefix holds only
    // papers published on or before them, the paper itself left out.
    const std::size_t n_dated = corpus.manifest().n_dated;
    std::uniform_int_distribution<std::size_t> pick(n_dated / 10, n_dated - 1);
    std::vector<std::string> texts;
    std::vector<std::size_t> limits;
    std::vector<std::int64_t> self;
    for (std::size_t i = 0; i < n_queries; ++i) {
        const std::size_t row = pick(rng);
        texts.push_back(corpus.id_and_title(row).second);
        limits.push_back(row + 1);
        self.push_back(static_cast<std::int64_t>(row));
    }

    const bool real_vectors = corpus.has_vectors();
    std::vector<float> corpus_vectors, query_vectors;
    VectorView view;
    if (real_vectors) {
        view = VectorView::of(corpus.vectors());
        dim = view.dim;
        query_vectors.resize(n_queries * dim);
        for (std::size_t i = 0; i < n_queries; ++i) corpus.vectors().row_as_f32(self[i], query_vectors.data() + i * dim);
    } else {
        corpus_vectors = random_unit_rows(n, dim, rng);
        query_vectors = random_unit_rows(n_queries, dim, rng);
        view = VectorView::of(corpus_vectors, dim);
    }
    SearchQueries queries;
    queries.vectors = query_vectors.data();
    queries.n_queries = n_queries;
    queries.dim = dim;
    queries.scope.row_limit = limits;
    for (std::size_t i = 0; i < n_queries; ++i) queries.scope.excluded.add({self[i]});

    auto backend = make_cpu_backend();
    backend->tuning.threads = threads;
    const auto index = backend->build(view);
    Bm25Index bm25(dir);

    // Dense at depth k (dense alone) and at the fusion depth (the hybrid's input).
    auto start = std::chrono::steady_clock::now();
    const auto dense_k = dense_rankings(*index, queries, k);
    const double dense_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const auto dense_deep = dense_rankings(*index, queries, std::max(k, depth));
    const double dense_deep_s = seconds_since(start);

    start = std::chrono::steady_clock::now();
    std::size_t bm25_hits = 0;
    for (std::size_t i = 0; i < n_queries; ++i)
        bm25_hits += bm25.rank(texts[i], limits[i], std::span<const std::int64_t>(&self[i], 1), k).size();
    const double bm25_s = seconds_since(start);

    start = std::chrono::steady_clock::now();
    std::vector<Ranking> bm25_deep;
    for (std::size_t i = 0; i < n_queries; ++i)
        bm25_deep.push_back(bm25.rank(texts[i], limits[i], std::span<const std::int64_t>(&self[i], 1), std::max(k, depth)));
    const double bm25_deep_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    std::size_t fused_hits = 0;
    for (std::size_t i = 0; i < n_queries; ++i) {
        const std::vector<Ranking> both{dense_deep[i], bm25_deep[i]};
        fused_hits += reciprocal_rank_fusion(both, k).size();
    }
    const double fusion_s = seconds_since(start);
    const double hybrid_s = dense_deep_s + bm25_deep_s + fusion_s;
    const auto qps = [&](double s) { return static_cast<double>(n_queries) / s; };
    (void)dense_k;
    std::printf("{\"corpus_papers\": %zu, \"queries\": %zu, \"k\": %zu, \"fusion_depth\": %zu, \"dim\": %zu, "
                "\"vectors\": \"%s\", \"threads\": %zu,\n"
                " \"dense_qps\": %.1f, \"bm25_qps\": %.1f, \"hybrid_qps\": %.1f,\n"
                " \"dense_deep_s\": %.3f, \"bm25_deep_s\": %.3f, \"fusion_s\": %.4f, \"mean_bm25_results\": %.1f, "
                "\"mean_hybrid_results\": %.1f}\n",
                n, n_queries, k, depth, dim, real_vectors ? "corpus" : "random unit (timing only)", threads,
                qps(dense_s), qps(bm25_s), qps(hybrid_s), dense_deep_s, bm25_deep_s, fusion_s,
                static_cast<double>(bm25_hits) / static_cast<double>(n_queries),
                static_cast<double>(fused_hits) / static_cast<double>(n_queries));
    return 0;
}
