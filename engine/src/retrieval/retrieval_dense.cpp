// Dense retrieval: cosine top-k through the search backend, as rankings.
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval.hpp"

namespace novelty {

std::vector<Ranking> dense_rankings(SearchIndex& index, const SearchQueries& queries, std::size_t depth) {
    if (depth < 1 || depth > SearchBackend::max_k)
        throw UsageError("dense retrieval depth must be 1.." + std::to_string(SearchBackend::max_k) + ", not " +
                         std::to_string(depth));
    const TopK top = index.search(queries, depth);
    std::vector<Ranking> rankings(queries.n_queries);
    for (std::size_t q = 0; q < queries.n_queries; ++q) {
        Ranking& r = rankings[q];
        r.rows.reserve(top.count[q]);
        r.scores.reserve(top.count[q]);
        for (std::size_t i = 0; i < top.count[q]; ++i) {
            r.rows.push_back(top.row(q, i));
            r.scores.push_back(top.sim(q, i));
        }
    }
    return rankings;
}

}  // namespace novelty
