#include "search/search_rules.hpp"

#include "search/cpu/topk_heap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace novelty {

std::size_t columns_below_limit(std::size_t limit, std::size_t first_col, std::size_t n_cols) {
    return limit <= first_col ? 0 : std::min(limit - first_col, n_cols);
}

TopK empty_top_k(std::size_t n_queries, std::size_t k) {
    TopK top;
    top.n_queries = n_queries;
    top.k = k;
    top.rows.assign(n_queries * k, -1);
    top.sims.assign(n_queries * k, -std::numeric_limits<float>::infinity());
    top.count.assign(n_queries, 0);
    return top;
}

std::size_t best_of(const float* sims, const std::int64_t* rows, std::size_t n, std::size_t k,
                    std::int64_t* out_rows, float* out_sims) {
    std::vector<ScoredRow> storage(2 * k);
    TopKCollector collector(storage.data(), k);
    const float minus_infinity = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < n; ++i)
        if (rows[i] >= 0 && sims[i] != minus_infinity) collector.push(sims[i], rows[i]);
    return collector.write_best_first(out_rows, out_sims);
}

void fill_densities(SelfJoin& join, const std::vector<std::size_t>& counts) {
    join.density.resize(join.n_rows);
    for (std::size_t row = 0; row < join.n_rows; ++row) {
        if (counts[row] < join.q) {
            join.density[row] = std::numeric_limits<float>::quiet_NaN();
            continue;
        }
        double distance = 0;
        for (std::size_t r = 0; r < join.q; ++r)
            distance += 1.0 - static_cast<double>(join.sims[row * join.k_stored + r]);
        join.density[row] = static_cast<float>(distance / static_cast<double>(join.q));
    }
}

SelfJoin self_join_from(TopK&& top, std::size_t n_rows, std::size_t q) {
    SelfJoin join;
    join.n_rows = n_rows;
    join.q = q;
    join.k_stored = top.k;
    join.rows = std::move(top.rows);
    join.sims = std::move(top.sims);
    fill_densities(join, top.count);
    return join;
}

std::size_t filter_capacity(std::size_t k) { return std::max<std::size_t>(1024, 2 * k); }

DeviceTilePlan plan_device_tiles(std::size_t n_queries, std::size_t n_rows, std::size_t k, std::size_t sims_bytes,
                                 std::size_t candidate_bytes, const SearchTuning& tuning) {
    constexpr std::size_t max_query_tile = 4096;
    constexpr std::size_t max_corpus_tile = 65536;
    DeviceTilePlan plan;
    const std::size_t queries = std::max<std::size_t>(n_queries, 1);
    const std::size_t rows = std::max<std::size_t>(n_rows, 1);
    plan.corpus_tile = tuning.corpus_tile ? tuning.corpus_tile : std::min(max_corpus_tile, rows);
    plan.corpus_tile = std::max(plan.corpus_tile, std::min(k, rows));
    if (tuning.query_tile) {
        plan.query_tile = tuning.query_tile;
    } else {
        const std::size_t fit = sims_bytes / (plan.corpus_tile * sizeof(float));
        plan.query_tile = std::clamp<std::size_t>(fit, 1, max_query_tile);
    }
    plan.query_tile = std::min(plan.query_tile, queries);
    const std::size_t per_query = (k + filter_capacity(k)) * (sizeof(float) + sizeof(std::int64_t));
    const std::size_t tiles_fit = std::max<std::size_t>(candidate_bytes / per_query / plan.query_tile, 1);
    plan.query_batch = std::min(queries, tiles_fit * plan.query_tile);
    return plan;
}

}  // namespace novelty
