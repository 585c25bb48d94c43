// Internal to the engine (corpus add and the density store use it; not part of the public API).
// Updating a cached self-join after papers were added to, replaced in or deleted from a corpus,
// instead of computing it again (novelty corpus add).
#pragma once

#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

struct SelfJoinUpdateStats {
    std::size_t new_rows = 0;        ///< rows added (searched in full)
    std::size_t dirty_rows = 0;      ///< kept rows that lost a neighbour to a deletion (searched in full)
    std::size_t entered_rows = 0;    ///< kept rows whose stored neighbours a new row entered
};

/// The self-join of all rows of `vectors` (the new corpus, n_rows x dim, normalised), from
/// `old`, the self-join of the whole previous corpus (old.n_rows rows), and the map from new
/// rows to old ones (`old_row_of_new[r]` = the old row of new row r, or -1 for a row added or
/// replaced; kept rows in ascending old order, so the relative order of kept rows is
/// unchanged). Kept rows whose stored neighbours all remain are not searched again: only the new
/// rows are offered to them (with the CPU backend's sgemm), and they keep the k_stored best of
/// old and new candidates. Kept rows that lost a stored neighbour (deleted or replaced), and the
/// new rows, are searched against every row. The result equals a full CPU self_join of the
/// new rows: neighbours similarity descending, ties by lower row, densities over the first q.
/// `threads` 0 = all cores. Throws UsageError when old.n_rows differs from the map's old rows
/// or the join does not cover the whole previous corpus. Pass `old` by std::move when it is no
/// longer needed: when the new rows are only appended (old row r is new row r), its lists are
/// then extended in place instead of copied.
SelfJoin update_self_join(SelfJoin old, const std::vector<std::int64_t>& old_row_of_new, const VectorView& vectors,
                          std::size_t threads = 0, SelfJoinUpdateStats* stats = nullptr);

}  // namespace novelty
