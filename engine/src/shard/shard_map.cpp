#include "shard/shard_map.hpp"

#include "search/search_rules.hpp"
#include "util/parallel_for.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

namespace novelty {

std::size_t ShardMap::local_below(std::size_t global) const {
    const std::size_t capped = std::min(global, n_rows);
    return capped <= rank ? 0 : (capped - rank + n_ranks - 1) / n_ranks;
}

bool ShardMap::holds(std::int64_t global) const {
    return global >= 0 && static_cast<std::size_t>(global) < n_rows &&
           static_cast<std::size_t>(global) % n_ranks == rank;
}

namespace {

std::vector<std::shared_ptr<const RowFilter>> local_filters(const SearchScope& scope, const ShardMap& map) {
    std::vector<std::shared_ptr<const RowFilter>> local;
    std::vector<std::pair<const RowFilter*, std::shared_ptr<const RowFilter>>> done;  // global -> local
    for (const auto& filter : scope.filters) {
        if (!filter) {
            local.push_back(nullptr);
            continue;
        }
        auto at = std::find_if(done.begin(), done.end(), [&](const auto& pair) { return pair.first == filter.get(); });
        if (at == done.end()) {
            auto mine = std::make_shared<RowFilter>(RowFilter::none(map.local_rows()));
            for (std::size_t j = 0; j < map.local_rows(); ++j)
                if (filter->allows(map.global_of(j))) mine->allow(j);
            at = done.insert(done.end(), {filter.get(), mine});
        }
        local.push_back(at->second);
    }
    return local;
}

// Query i's excluded rows and, with self-exclusion, its own row, as the shard's local rows.
RowLists local_exclusions(const SearchScope& scope, std::size_t n_queries, const ShardMap& map) {
    RowLists local;
    if (scope.excluded.n_items() == 0 && scope.first_self_row < 0) return local;
    std::vector<std::int64_t> rows;
    for (std::size_t i = 0; i < n_queries; ++i) {
        rows.clear();
        for (std::size_t e = 0; e < scope.excluded.size(i); ++e) {
            const std::int64_t row = scope.excluded.begin(i)[e];
            if (map.holds(row)) rows.push_back(static_cast<std::int64_t>(map.local_of(row)));
        }
        const std::int64_t self = scope.first_self_row < 0 ? -1 : scope.first_self_row + static_cast<std::int64_t>(i);
        if (map.holds(self)) rows.push_back(static_cast<std::int64_t>(map.local_of(self)));
        local.add(rows);
    }
    return local;
}

}  // namespace

SearchScope local_scope(const SearchScope& scope, std::size_t n_queries, const ShardMap& map) {
    SearchScope local;
    local.row_begin.reserve(scope.row_begin.size());
    for (std::size_t begin : scope.row_begin) local.row_begin.push_back(map.local_below(begin));
    local.row_limit.reserve(scope.row_limit.size());
    for (std::size_t limit : scope.row_limit) local.row_limit.push_back(map.local_below(limit));
    local.filters = local_filters(scope, map);
    local.excluded = local_exclusions(scope, n_queries, map);
    return local;
}

SearchQueries local_queries(const SearchQueries& queries, const ShardMap& map) {
    SearchQueries local;
    local.vectors = queries.vectors;
    local.n_queries = queries.n_queries;
    local.dim = queries.dim;
    local.unit_norm = true;
    local.scope = local_scope(queries.scope, queries.n_queries, map);
    return local;
}

RowLists local_candidates(const RowLists& candidates, const ShardMap& map) {
    RowLists local;
    local.offsets.push_back(0);
    for (std::size_t i = 0; i < candidates.n_items(); ++i) {
        for (std::size_t c = 0; c < candidates.size(i); ++c) {
            const std::int64_t row = candidates.begin(i)[c];
            if (map.holds(row)) local.rows.push_back(static_cast<std::int64_t>(map.local_of(row)));
        }
        local.offsets.push_back(local.rows.size());
    }
    if (candidates.n_items() == 0) local.offsets.clear();
    return local;
}

void to_global_rows(std::vector<std::int64_t>& rows, const ShardMap& map) {
    for (std::int64_t& row : rows)
        if (row >= 0) row = map.global_of(static_cast<std::size_t>(row));
}

void merge_two_lists(ListEntry* list, const ListEntry* other, std::size_t k) {
    const auto real = [](const ListEntry& e) { return e.row >= 0; };
    const auto before = [](const ListEntry& a, const ListEntry& b) {
        return a.sim > b.sim || (a.sim == b.sim && a.row < b.row);
    };
    std::vector<ListEntry> merged(k, ListEntry{-std::numeric_limits<float>::infinity(), -1});
    std::size_t a = 0, b = 0;
    for (std::size_t out = 0; out < k; ++out) {
        const bool take_a = a < k && real(list[a]), take_b = b < k && real(other[b]);
        if (!take_a && !take_b) break;
        merged[out] = take_a && (!take_b || before(list[a], other[b])) ? list[a++] : other[b++];
    }
    std::copy(merged.begin(), merged.end(), list);
}

std::vector<ListEntry> to_list_entries(const TopK& top) {
    std::vector<ListEntry> entries(top.rows.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
        entries[i] = ListEntry{top.sims[i], static_cast<std::int32_t>(top.rows[i])};
    return entries;
}

TopK from_list_entries(const std::vector<ListEntry>& entries, std::size_t n_queries, std::size_t k) {
    TopK top = empty_top_k(n_queries, k);
    for (std::size_t i = 0; i < n_queries * k; ++i) {
        if (entries[i].row < 0) continue;
        top.rows[i] = entries[i].row;
        top.sims[i] = entries[i].sim;
        ++top.count[i / k];
    }
    return top;
}

TopK merge_top_k(const std::vector<std::int64_t>& parts_rows, const std::vector<float>& parts_sims,
                 std::size_t n_parts, std::size_t n_queries, std::size_t k, std::size_t threads) {
    TopK top = empty_top_k(n_queries, k);
    constexpr std::size_t queries_per_block = 256;
    parallel_for_blocks((n_queries + queries_per_block - 1) / queries_per_block, threads, [&](std::size_t block) {
        std::vector<std::int64_t> rows(n_parts * k);
        std::vector<float> sims(n_parts * k);
        const std::size_t end = std::min(n_queries, (block + 1) * queries_per_block);
        for (std::size_t i = block * queries_per_block; i < end; ++i) {
            for (std::size_t p = 0; p < n_parts; ++p) {
                const std::size_t from = (p * n_queries + i) * k;
                std::copy_n(parts_rows.begin() + from, k, rows.begin() + p * k);
                std::copy_n(parts_sims.begin() + from, k, sims.begin() + p * k);
            }
            top.count[i] = best_of(sims.data(), rows.data(), n_parts * k, k, top.rows.data() + i * k,
                                   top.sims.data() + i * k);
        }
    });
    return top;
}

}  // namespace novelty
