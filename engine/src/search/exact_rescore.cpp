#include "search/exact_rescore.hpp"

#include "novelty/util/cpu_path.hpp"
#include "novelty/util/half.hpp"
#include "search/exact_dot_simd.hpp"
#include "search/scope_rules.hpp"
#include "search/search_rules.hpp"
#include "util/parallel_for.hpp"

#include <algorithm>
#include <limits>

namespace novelty {

const float* rows_as_f32(const VectorView& view, std::size_t first, std::size_t n, std::vector<float>& buffer) {
    if (view.dtype == DType::f32) return static_cast<const float*>(view.data) + first * view.dim;
    buffer.resize(n * view.dim);
    const auto* src = static_cast<const std::uint16_t*>(view.data) + first * view.dim;
    for (std::size_t i = 0; i < n * view.dim; ++i) buffer[i] = half_to_float(src[i]);
    return buffer.data();
}

const float* row_as_f32(const VectorView& view, std::size_t row, std::vector<float>& buffer) {
    if (view.dtype == DType::f32) return static_cast<const float*>(view.data) + row * view.dim;
    buffer.resize(view.dim);
    const auto* src = static_cast<const std::uint16_t*>(view.data) + row * view.dim;
    for (std::size_t c = 0; c < view.dim; ++c) buffer[c] = half_to_float(src[c]);
    return buffer.data();
}

namespace {

float exact_dot_plain(const float* a, const float* b, std::size_t dim) { return exact_dot(a, b, dim); }

}  // namespace

ExactDotFn exact_dot_for_cpu() {
    switch (cpu_path()) {
        case CpuPath::amx:
        case CpuPath::avx512: return exact_dot_avx512;
        case CpuPath::avxvnni:
        case CpuPath::avx2: return exact_dot_avx2;
        case CpuPath::f32: break;
    }
    return exact_dot_plain;
}

std::size_t rescore_best(const float* query, const VectorView& corpus, ScoredRow* best, std::size_t n, std::size_t k,
                         std::int64_t* rows, float* sims) {
    std::vector<float> buffer;
    const ExactDotFn dot = exact_dot_for_cpu();
    for (std::size_t i = 0; i < n; ++i)
        best[i].sim = dot(query, row_as_f32(corpus, static_cast<std::size_t>(best[i].row), buffer), corpus.dim);
    // ranks_before is a total order (the rows differ): the first k of a full sort, in order.
    if (n > k) std::nth_element(best, best + k, best + n, ranks_before);
    const std::size_t count = std::min(n, k);
    std::sort(best, best + count, ranks_before);
    write_padded(best, count, k, rows, sims);
    return count;
}

TopK exact_candidates_topk(const VectorView& corpus, const SearchQueries& queries, const RowLists& candidates,
                           std::size_t k, std::size_t threads) {
    const std::size_t dim = corpus.dim;
    const ScopeRules scope(queries.scope, queries.n_queries, corpus.n_rows);
    TopK result = empty_top_k(queries.n_queries, k);
    parallel_for_blocks(queries.n_queries, threads, [&](std::size_t i) {
        const std::vector<std::int64_t> rows = scope.candidates(candidates, i);
        std::vector<ScoredRow> storage(2 * k);
        TopKCollector heap(storage.data(), k);
        std::vector<float> buffer;
        const float* query = queries.vectors + i * dim;
        const ExactDotFn dot = exact_dot_for_cpu();
        for (std::int64_t row : rows)
            heap.push(dot(query, row_as_f32(corpus, static_cast<std::size_t>(row), buffer), dim), row);
        result.count[i] = heap.write_best_first(result.rows.data() + i * k, result.sims.data() + i * k);
    });
    return result;
}

}  // namespace novelty
