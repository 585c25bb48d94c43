// Inserting a candidate into a stored neighbour list kept in the merge rule's order (similarity
// descending, equal similarities by lower row; -1 padding last), as the self-join lists rows.
#pragma once

#include "search/cpu/topk_heap.hpp"

#include <cstddef>
#include <cstdint>

namespace novelty {

/// Inserts (sim, row) into the sorted list of k entries at `rows` / `sims` when it ranks before
/// the last one (higher similarity, or equal and a lower row; padding -1 ranks last); returns
/// whether it entered. Row is any integer type the list holds.
template <typename Row>
bool insert_sorted(Row* rows, float* sims, std::size_t k, float sim, std::int64_t row) {
    const ScoredRow cand{sim, static_cast<std::int32_t>(row)};
    auto before = [&](std::size_t i) {
        return rows[i] < 0 || ranks_before(cand, ScoredRow{sims[i], static_cast<std::int32_t>(rows[i])});
    };
    if (!before(k - 1)) return false;
    std::size_t at = k - 1;
    while (at > 0 && before(at - 1)) {
        rows[at] = rows[at - 1];
        sims[at] = sims[at - 1];
        --at;
    }
    rows[at] = static_cast<Row>(row);
    sims[at] = sim;
    return true;
}

}  // namespace novelty
