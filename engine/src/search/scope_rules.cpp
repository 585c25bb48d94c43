#include "search/scope_rules.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <string>

namespace novelty {

namespace {

std::string entries_for(std::size_t entries, const char* what, std::size_t n_queries) {
    return std::to_string(entries) + " " + what + " for " + std::to_string(n_queries) + " queries";
}

}  // namespace

void check_scope(const SearchScope& scope, std::size_t n_queries, std::size_t n_rows) {
    if (!scope.row_begin.empty() && scope.row_begin.size() != n_queries)
        throw UsageError("row_begin has " + entries_for(scope.row_begin.size(), "entries", n_queries));
    if (!scope.row_limit.empty() && scope.row_limit.size() != n_queries)
        throw UsageError("row_limit has " + entries_for(scope.row_limit.size(), "entries", n_queries));
    if (scope.excluded.n_items() != 0 && scope.excluded.n_items() != n_queries)
        throw UsageError("excluded has " + entries_for(scope.excluded.n_items(), "lists", n_queries));
    if (scope.filters.size() > 1 && scope.filters.size() != n_queries)
        throw UsageError("filters has " + entries_for(scope.filters.size(), "entries", n_queries) +
                             " (give none, one, or one per query)", "filters");
    for (const auto& filter : scope.filters)
        if (filter && (filter->n_rows != n_rows || filter->words.size() != (n_rows + 63) / 64))
            throw UsageError("a filter covers " + std::to_string(filter->n_rows) + " rows but the index has " +
                             std::to_string(n_rows), "filters");
    if (scope.first_self_row >= 0 && static_cast<std::size_t>(scope.first_self_row) + n_queries > n_rows)
        throw UsageError("first_self_row " + std::to_string(scope.first_self_row) + " puts " +
                         std::to_string(n_queries) + " queries past the index's " + std::to_string(n_rows) + " rows");
}

ScopeRules::ScopeRules(const SearchScope& scope, std::size_t n_queries, std::size_t n_rows)
    : n_rows_(n_rows), first_self_row_(scope.first_self_row), filters_(scope.filters) {
    if (!scope.row_limit.empty()) {
        limits_.resize(n_queries);
        for (std::size_t i = 0; i < n_queries; ++i) limits_[i] = std::min(scope.row_limit[i], n_rows);
    }
    if (!scope.row_begin.empty()) {
        begins_.resize(n_queries);
        for (std::size_t i = 0; i < n_queries; ++i) begins_[i] = std::min(scope.row_begin[i], limit(i));
    }
    if (scope.excluded.n_items() == 0) return;
    excluded_.resize(n_queries);
    for (std::size_t i = 0; i < n_queries; ++i) {
        excluded_[i].assign(scope.excluded.begin(i), scope.excluded.begin(i) + scope.excluded.size(i));
        std::sort(excluded_[i].begin(), excluded_[i].end());
    }
}

std::vector<std::int64_t> ScopeRules::candidates(const RowLists& lists, std::size_t i) const {
    std::vector<std::int64_t> rows;
    if (lists.n_items() == 0) return rows;
    rows.assign(lists.begin(i), lists.begin(i) + lists.size(i));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](std::int64_t row) { return !allows(i, row); }), rows.end());
    return rows;
}

void ScopeRules::excluded_lists(std::size_t first, std::size_t n, std::vector<std::int64_t>& offsets,
                                std::vector<std::int64_t>& rows) const {
    offsets.clear();
    rows.clear();
    if (excluded_.empty()) return;
    offsets.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& list = excluded_[first + i];
        rows.insert(rows.end(), list.begin(), list.end());
        offsets[i + 1] = static_cast<std::int64_t>(rows.size());
    }
    if (rows.empty()) offsets.clear();
}

}  // namespace novelty
