// The symmetric self-join on the CPU: each pair of row blocks is multiplied once and feeds both
// blocks' top-k collectors, halving the matrix products of a plain search of the corpus against
// itself.
#pragma once

#include "novelty/search/search.hpp"
#include "search/cpu/screening.hpp"

#include <functional>

namespace novelty {

/// The memory the symmetric join may use when SearchTuning::self_join_memory is 0: 1 GiB.
inline constexpr std::size_t default_self_join_memory = std::size_t(1) << 30;

/// Bytes of collector storage the symmetric join needs for n_rows rows keeping k_stored each.
std::size_t symmetric_join_bytes(std::size_t n_rows, std::size_t k_stored);

/// How the symmetric join computes its screened products: by default sgemm on the float32 rows.
/// `product(rows_i, n_i, j0, n_j, sims)` fills sims [n_i x n_j] with the screened products of
/// the float32 rows rows_i (n_i x dim, a block of the corpus) with corpus rows [j0, j0 + n_j);
/// `operands` says which screen_margin bounds them; blocks start at multiples of
/// `block_multiple` (the bf16 index's panels).
struct SelfJoinProducts {
    ScreenOperands operands = ScreenOperands::f32;
    std::function<void(const float* rows_i, std::size_t n_i, std::size_t j0, std::size_t n_j, float* sims)> product;
    std::size_t block_multiple = 1;
};

/// Each of rows [0, n_rows) of `corpus`: its k_stored nearest other rows (similarity descending,
/// ties by lower row, -1/-inf padding) and its density over the nearest q, exactly (exact_dot,
/// whatever `products` screens with). Arguments are checked by the caller (SearchIndex::self_join).
SelfJoin symmetric_self_join(const VectorView& corpus, std::size_t n_rows, std::size_t q, std::size_t k_stored,
                             const SearchTuning& tuning, const ProgressFn& progress,
                             const SelfJoinProducts& products = {});

}  // namespace novelty
