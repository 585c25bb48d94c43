#include "search/cpu/tiled_topk.hpp"

#include "search/exact_rescore.hpp"

namespace novelty {

TopKProblem search_problem(const VectorView& corpus, const SearchQueries& queries, std::size_t k,
                           const SearchTuning& tuning) {
    TopKProblem problem;
    problem.corpus = corpus;
    problem.queries = VectorView{queries.vectors, DType::f32, queries.n_queries, queries.dim};
    problem.k = k;
    problem.scope = ScopeRules(queries.scope, queries.n_queries, corpus.n_rows);
    problem.tuning = tuning;
    return problem;
}

TopKProblem self_join_problem(const VectorView& corpus, std::size_t n_rows, std::size_t k_stored,
                              const SearchTuning& tuning) {
    TopKProblem problem;
    problem.corpus = corpus;
    problem.corpus.n_rows = n_rows;
    problem.queries = problem.corpus;
    problem.k = k_stored;
    problem.scope = ScopeRules(rows_themselves(), n_rows, n_rows);
    problem.tuning = tuning;
    return problem;
}

QueryBlock::QueryBlock(const TopKProblem& problem, std::size_t q0, std::size_t n_block) : first(q0), n(n_block) {
    const float* queries = rows_as_f32(problem.queries, q0, n_block, vectors);
    if (problem.queries.dtype == DType::f32)  // our own copy: the tile loop reuses it
        vectors.assign(queries, queries + n_block * problem.corpus.dim);
    begin.resize(n_block);
    limit.resize(n_block);
    block_begin = problem.corpus.n_rows;
    for (std::size_t i = 0; i < n_block; ++i) {
        limit[i] = problem.scope.limit(q0 + i);
        begin[i] = problem.scope.begin(q0 + i);
        if (begin[i] < limit[i]) {
            block_begin = std::min(block_begin, begin[i]);
            block_limit = std::max(block_limit, limit[i]);
        }
    }
    if (block_limit == 0) block_begin = 0;
}

}  // namespace novelty
