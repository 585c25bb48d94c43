// A naive double-precision top-k, the reference every search backend is tested against.
#pragma once

#include "novelty/util/half.hpp"
#include "novelty/search/search.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace novelty::test {

struct RefHit {
    double sim;
    std::int64_t row;
};

/// Element (row, c) of a view as double.
inline double element(const VectorView& v, std::size_t row, std::size_t c) {
    if (v.dtype == DType::f32) return static_cast<const float*>(v.data)[row * v.dim + c];
    return half_to_float(static_cast<const std::uint16_t*>(v.data)[row * v.dim + c]);
}

/// Top-k of `query` (normalised here, in double) among corpus rows [0, limit) not in `excluded`,
/// by similarity descending, ties by lower row.
inline std::vector<RefHit> reference_topk(const VectorView& corpus, const float* query, std::size_t limit,
                                          const std::vector<std::int64_t>& excluded, std::size_t k,
                                          const std::vector<std::int64_t>* only_rows = nullptr) {
    double norm = 0;
    for (std::size_t c = 0; c < corpus.dim; ++c) norm += double(query[c]) * query[c];
    norm = std::sqrt(norm);
    std::vector<RefHit> hits;
    auto consider = [&](std::int64_t row) {
        if (static_cast<std::size_t>(row) >= std::min(limit, corpus.n_rows)) return;
        if (std::find(excluded.begin(), excluded.end(), row) != excluded.end()) return;
        double dot = 0;
        for (std::size_t c = 0; c < corpus.dim; ++c) dot += element(corpus, row, c) * query[c];
        hits.push_back({dot / norm, row});
    };
    if (only_rows) {
        std::vector<std::int64_t> rows = *only_rows;
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        for (auto row : rows) consider(row);
    } else {
        for (std::size_t row = 0; row < corpus.n_rows; ++row) consider(static_cast<std::int64_t>(row));
    }
    std::sort(hits.begin(), hits.end(), [](const RefHit& a, const RefHit& b) {
        return a.sim > b.sim || (a.sim == b.sim && a.row < b.row);
    });
    if (hits.size() > k) hits.resize(k);
    return hits;
}

/// Queries over `vectors` (n x dim, row-major), with no ranges or exclusions yet.
inline SearchQueries make_queries(const std::vector<float>& vectors, std::size_t dim) {
    SearchQueries q;
    q.vectors = vectors.data();
    q.n_queries = vectors.size() / dim;
    q.dim = dim;
    return q;
}

/// n x dim random normal rows, L2-normalised.
inline std::vector<float> random_unit_rows(std::size_t n, std::size_t dim, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::vector<float> v(n * dim);
    for (std::size_t r = 0; r < n; ++r) {
        double norm = 0;
        do {
            norm = 0;
            for (std::size_t c = 0; c < dim; ++c) {
                v[r * dim + c] = normal(rng);
                norm += double(v[r * dim + c]) * v[r * dim + c];
            }
        } while (norm == 0);
        for (std::size_t c = 0; c < dim; ++c) v[r * dim + c] = static_cast<float>(v[r * dim + c] / std::sqrt(norm));
    }
    return v;
}

}  // namespace novelty::test
