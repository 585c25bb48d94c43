// A search scope (novelty/search/search.hpp, SearchScope) made ready to apply: the one reading of
// its fields that every backend uses. The CPU tile loop and every candidate scorer (CPU and the
// CUDA host side) ask it which rows a query may find; the CUDA pipeline uploads what it answers
// as the mask kernel's arrays (cuda/tiled_search.cpp); a shard maps the scope to its own rows
// (shard/shard_map.hpp) and then applies it here like one process. Internal to the engine.
#pragma once

#include "novelty/search/search.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace novelty {

/// Checks a scope's shape for n_queries queries against an index of n_rows rows: one entry or
/// list per query where given, none, one or n_queries filters each covering n_rows rows, the
/// self rows inside the index. Throws UsageError naming the field otherwise. SearchIndex's
/// public methods call it before any backend sees the scope.
void check_scope(const SearchScope& scope, std::size_t n_queries, std::size_t n_rows);

/// The scope of a self-join: query i is row i, left out of its own results.
inline SearchScope rows_themselves() {
    SearchScope scope;
    scope.first_self_row = 0;
    return scope;
}

/// The scope of n_queries queries searched over rows [0, n_rows) (the index, or a self-join's
/// prefix). Holds its own clamped ranges, sorted copy of the exclusions and shares the filters,
/// so it does not refer to the scope it was made from. Expects a checked scope (check_scope).
class ScopeRules {
public:
    ScopeRules() = default;  ///< no queries
    ScopeRules(const SearchScope& scope, std::size_t n_queries, std::size_t n_rows);

    /// The end of query i's rows: row_limit[i] capped at n_rows; n_rows when there are no limits.
    std::size_t limit(std::size_t i) const { return limits_.empty() ? n_rows_ : limits_[i]; }
    /// The first of query i's rows, never past limit(i).
    std::size_t begin(std::size_t i) const { return begins_.empty() ? 0 : begins_[i]; }
    /// Query i's metadata filter, or null.
    const RowFilter* filter(std::size_t i) const {
        if (filters_.empty()) return nullptr;
        return filters_.size() == 1 ? filters_[0].get() : filters_[i].get();
    }
    /// Query i's excluded rows, ascending (duplicates kept); null when it has none.
    const std::vector<std::int64_t>* excluded(std::size_t i) const {
        return excluded_.empty() || excluded_[i].empty() ? nullptr : &excluded_[i];
    }
    /// The corpus row query i is (left out of its results), or -1.
    std::int64_t self_row(std::size_t i) const {
        return first_self_row_ < 0 ? -1 : first_self_row_ + static_cast<std::int64_t>(i);
    }

    bool has_begins() const { return !begins_.empty(); }
    bool has_filters() const { return !filters_.empty(); }

    /// Whether query i may find `row` when `row` is already known to lie in [begin(i), limit(i)):
    /// the filter allows it, it is not excluded and it is not the query itself.
    bool keeps(std::size_t i, std::int64_t row) const {
        if (row == self_row(i)) return false;
        const RowFilter* f = filter(i);
        if (f != nullptr && !f->allows(row)) return false;
        const std::vector<std::int64_t>* out = excluded(i);
        return out == nullptr || !std::binary_search(out->begin(), out->end(), row);
    }
    /// Whether query i may find `row` (the range checked too).
    bool allows(std::size_t i, std::int64_t row) const {
        return row >= static_cast<std::int64_t>(begin(i)) && row < static_cast<std::int64_t>(limit(i)) && keeps(i, row);
    }

    /// Item i's candidate rows that query i may find: ascending, each once.
    std::vector<std::int64_t> candidates(const RowLists& lists, std::size_t i) const;

    /// The excluded rows of queries [first, first + n) as the mask kernel takes them: offsets
    /// (n + 1 entries) into rows, each query's rows ascending; both empty when none of them has any.
    void excluded_lists(std::size_t first, std::size_t n, std::vector<std::int64_t>& offsets,
                        std::vector<std::int64_t>& rows) const;

private:
    std::size_t n_rows_ = 0;
    std::int64_t first_self_row_ = -1;
    std::vector<std::shared_ptr<const RowFilter>> filters_;
    std::vector<std::size_t> begins_, limits_;
    std::vector<std::vector<std::int64_t>> excluded_;
};

}  // namespace novelty
