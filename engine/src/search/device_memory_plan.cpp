#include "search/device_memory_plan.hpp"

#include <algorithm>
#include <cstdint>

namespace novelty {

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;
constexpr std::size_t pair_bytes = sizeof(float) + sizeof(std::int64_t);  // a (similarity, row) pair

}  // namespace

DeviceBudget split_device_budget(std::size_t total) {
    DeviceBudget b;
    b.total = total;
    b.sims = std::min(std::size_t{2} << 30, total / 4);
    b.candidates = std::min(std::size_t{1} << 30, total / 8);
    b.select_workspace = std::min(std::size_t{1} << 30, total / 8);
    b.staging = std::min(std::size_t{64} << 20, total / 16);
    return b;
}

DeviceMemoryPlan plan_device_memory(const DeviceBudget& budget, const DeviceSearchShape& shape,
                                    const SearchTuning& tuning) {
    DeviceMemoryPlan plan;
    const std::size_t buffers = std::max<std::size_t>(shape.sims_buffers, 1);
    plan.tiles = plan_device_tiles(shape.n_queries, shape.n_rows, shape.k, budget.sims / buffers, budget.candidates,
                                   tuning);
    const DeviceTilePlan& t = plan.tiles;
    const std::size_t tiles = buffers * t.query_tile * t.corpus_tile * sizeof(float) + 2 * t.query_tile * shape.k * pair_bytes;
    const std::size_t per_query = (shape.k + filter_capacity(shape.k)) * pair_bytes        // candidates
                                  + shape.dim * (sizeof(float) + shape.storage_bytes)     // queries, both types
                                  + shape.k * pair_bytes;                                 // re-scoring
    plan.work_bytes = tiles + t.query_batch * per_query + budget.select_workspace + 2 * budget.staging;
    plan.room = budget.total > plan.work_bytes ? budget.total - plan.work_bytes : 0;
    const std::size_t row_bytes = std::max<std::size_t>(shape.dim * shape.storage_bytes, 1);
    plan.resident_fits = shape.corpus_rows * row_bytes <= plan.room;
    plan.chunk_rows = std::min(shape.n_rows, plan.room / 2 / row_bytes);
    plan.streaming_fits = plan.chunk_rows >= t.corpus_tile || plan.chunk_rows >= shape.n_rows;
    return plan;
}

std::size_t smallest_feasible_budget_mib(const DeviceSearchShape& shape, const SearchTuning& tuning) {
    const auto feasible = [&](std::size_t budget_mib) {
        return plan_device_memory(split_device_budget(budget_mib * mib), shape, tuning).feasible();
    };
    if (shape.n_rows == 0 || shape.corpus_rows == 0) return 1;
    // Room grows with the budget once the capped parts stop growing, so doubling ends; the cap
    // only keeps the byte count representable.
    constexpr std::size_t most_mib = std::size_t{1} << 40;
    std::size_t low = 0, high = 1;  // low: not feasible (0 MiB never is); high: to be found
    while (!feasible(high)) {
        if (high >= most_mib) return most_mib;
        low = high;
        high *= 2;
    }
    while (high - low > 1) {
        const std::size_t middle = low + (high - low) / 2;
        if (feasible(middle)) high = middle;
        else low = middle;
    }
    return high;
}

}  // namespace novelty
