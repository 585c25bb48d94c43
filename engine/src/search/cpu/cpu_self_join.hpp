// The symmetric self-join on the CPU: each pair of row blocks is multiplied once and feeds both
// blocks' top-k collectors, halving the matrix products of a plain search of the corpus against
// itself.
#pragma once

#include "novelty/search/search.hpp"

namespace novelty {

/// Bytes of collector storage the symmetric join needs for n_rows rows keeping k_stored each.
std::size_t symmetric_join_bytes(std::size_t n_rows, std::size_t k_stored);

/// Each of rows [0, n_rows) of `corpus`: its k_stored nearest other rows (similarity descending,
/// ties by lower row, -1/-inf padding) and its density over the nearest q. Arguments are
/// checked by the caller (SearchIndex::self_join).
SelfJoin symmetric_self_join(const VectorView& corpus, std::size_t n_rows, std::size_t q, std::size_t k_stored,
                             const SearchTuning& tuning, const ProgressFn& progress);

}  // namespace novelty
