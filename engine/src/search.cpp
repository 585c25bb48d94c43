// SearchBackend's public methods: argument checks, query normalisation, then the implementation.
#include "novelty/error.hpp"
#include "novelty/search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace novelty {

void RowLists::add(const std::vector<std::int64_t>& item_rows) {
    if (offsets.empty()) offsets.push_back(0);
    rows.insert(rows.end(), item_rows.begin(), item_rows.end());
    offsets.push_back(rows.size());
}

namespace {

void check_corpus(const VectorView& corpus) {
    if (corpus.n_rows == 0) throw UsageError("the corpus is empty: there is nothing to search");
    if (corpus.dim == 0) throw UsageError("the corpus vectors have dimension 0");
    if (!corpus.data) throw UsageError("the corpus has no vector data");
    if (corpus.n_rows > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw UsageError("the corpus has more than 2^31 - 1 rows, which this engine does not support");
}

void check_k(std::size_t k) {
    if (k < 1 || k > SearchBackend::max_k)
        throw UsageError("k must be between 1 and " + std::to_string(SearchBackend::max_k) + ", not " + std::to_string(k));
}

// Checks shapes and returns the queries L2-normalised (a zero or non-finite query is refused).
SearchQueries normalised(const VectorView& corpus, const SearchQueries& queries, std::vector<float>& storage) {
    if (queries.n_queries > 0 && queries.dim != corpus.dim)
        throw UsageError("dimension mismatch: the queries have dimension " + std::to_string(queries.dim) +
                         " but the corpus has " + std::to_string(corpus.dim));
    if (queries.n_queries > 0 && !queries.vectors) throw UsageError("the queries have no vector data");
    if (!queries.row_limit.empty() && queries.row_limit.size() != queries.n_queries)
        throw UsageError("row_limit has " + std::to_string(queries.row_limit.size()) + " entries for " +
                         std::to_string(queries.n_queries) + " queries");
    if (queries.excluded.n_items() != 0 && queries.excluded.n_items() != queries.n_queries)
        throw UsageError("excluded has " + std::to_string(queries.excluded.n_items()) + " lists for " +
                         std::to_string(queries.n_queries) + " queries");
    const std::size_t dim = queries.dim;
    storage.assign(queries.vectors, queries.vectors + queries.n_queries * dim);
    for (std::size_t i = 0; i < queries.n_queries; ++i) {
        float* q = storage.data() + i * dim;
        double sum = 0;
        for (std::size_t c = 0; c < dim; ++c) {
            if (!std::isfinite(q[c])) throw UsageError("query " + std::to_string(i) + " contains NaN or Inf");
            sum += double(q[c]) * q[c];
        }
        if (sum == 0) throw UsageError("query " + std::to_string(i) + " is a zero vector");
        const double inv = 1.0 / std::sqrt(sum);
        for (std::size_t c = 0; c < dim; ++c) q[c] = static_cast<float>(q[c] * inv);
    }
    SearchQueries out = queries;
    out.vectors = storage.data();
    return out;
}

}  // namespace

TopK SearchBackend::search(const VectorView& corpus, const SearchQueries& queries, std::size_t k) {
    check_corpus(corpus);
    check_k(k);
    std::vector<float> storage;
    return search_impl(corpus, normalised(corpus, queries, storage), k);
}

SelfJoin SearchBackend::self_join(const VectorView& corpus, std::size_t n_rows, std::size_t q, std::size_t k_stored,
                                  const ProgressFn& progress) {
    check_corpus(corpus);
    if (n_rows == 0 || n_rows > corpus.n_rows)
        throw UsageError("self-join prefix must be 1.." + std::to_string(corpus.n_rows) + " rows, not " +
                         std::to_string(n_rows));
    if (q < 1) throw UsageError("q must be at least 1");
    if (k_stored < q) throw UsageError("k_stored must be at least q");
    check_k(k_stored);
    return self_join_impl(corpus, n_rows, q, k_stored, progress);
}

TopK SearchBackend::search_candidates(const VectorView& corpus, const SearchQueries& queries,
                                      const RowLists& candidates, std::size_t k) {
    check_corpus(corpus);
    check_k(k);
    if (candidates.n_items() != queries.n_queries)
        throw UsageError("candidates have " + std::to_string(candidates.n_items()) + " lists for " +
                         std::to_string(queries.n_queries) + " queries");
    for (std::int64_t row : candidates.rows)
        if (row < 0 || static_cast<std::size_t>(row) >= corpus.n_rows)
            throw UsageError("candidate row " + std::to_string(row) + " is outside the corpus (" +
                             std::to_string(corpus.n_rows) + " rows)");
    std::vector<float> storage;
    return search_candidates_impl(corpus, normalised(corpus, queries, storage), candidates, k);
}

}  // namespace novelty
