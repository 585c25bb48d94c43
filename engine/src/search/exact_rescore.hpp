// The similarities every backend reports, computed in one fixed order: the exact re-score rule
// the CPU indexes, the CUDA index (for what a streamed 16-bit search found) and the density
// store's updates share. A BLAS kernel's result
// for one (query, row) pair can depend on where the pair falls in the tile (measured: OpenBLAS's
// Haswell and Cooperlake kernels both change the last bit of some products with the tile's shape
// and the row's place in it), so the tiles only choose candidates: each query keeps every row
// a proven bound on the tile's error cannot rule out (screening.hpp), they are scored again with
// exact_dot, ordered by the merge rule and cut. Results then do not depend on tile sizes,
// threads, the storage (f32 or bf16) or how the corpus is split into shards (a sharded index
// merges the same bits one process reports).
#pragma once

#include "novelty/search/search.hpp"
#include "search/cpu/topk_heap.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

/// The dot product of a and b (dim floats) in one fixed order: 16 interleaved float partial sums
/// (element c goes to sum c mod 16) added pairwise (0+8, 1+9, ...; then 0+4, ...). The same
/// inputs give the same bits on every call.
inline float exact_dot(const float* a, const float* b, std::size_t dim) {
    float lane[16] = {};
    std::size_t c = 0;
    for (; c + 16 <= dim; c += 16)
        for (std::size_t j = 0; j < 16; ++j) lane[j] += a[c + j] * b[c + j];
    for (std::size_t j = 0; c < dim; ++c, ++j) lane[j] += a[c] * b[c];
    for (std::size_t width = 8; width > 0; width /= 2)
        for (std::size_t j = 0; j < width; ++j) lane[j] += lane[j + width];
    return lane[0];
}

/// A function computing exact_dot's bits.
using ExactDotFn = float (*)(const float* a, const float* b, std::size_t dim);
/// exact_dot on the widest registers of the CPU path (novelty/util/cpu_path.hpp): AVX-512 on amx
/// and avx512, AVX2 on avxvnni and avx2 (search/exact_dot_simd.hpp), else exact_dot itself; the
/// same bits on every path. Read once per batch of calls: it asks cpu_path().
ExactDotFn exact_dot_for_cpu();

/// Rows [first, first + n) of `view` as float32: a pointer into the view when it is float32,
/// otherwise converted into `buffer`.
const float* rows_as_f32(const VectorView& view, std::size_t first, std::size_t n, std::vector<float>& buffer);

/// Row `row` of `view` as float32: a pointer into the view (float32) or into `buffer`.
const float* row_as_f32(const VectorView& view, std::size_t row, std::vector<float>& buffer);

/// Re-scores the n candidates in `best` (any order) as exact_dot(query, row), orders them by the
/// merge rule (similarity descending, then lower row) and writes the first k to rows / sims
/// (-1 / -inf after them). Returns how many are real (min(n, k)).
std::size_t rescore_best(const float* query, const VectorView& corpus, ScoredRow* best, std::size_t n, std::size_t k,
                         std::int64_t* rows, float* sims);

/// Top-k of each query among its own candidate rows, every similarity by exact_dot against the
/// corpus rows (SearchIndex::search_candidates on the CPU; the CUDA index's host re-score). The
/// queries' scope applies (ScopeRules); `threads` as in SearchTuning.
TopK exact_candidates_topk(const VectorView& corpus, const SearchQueries& queries, const RowLists& candidates,
                           std::size_t k, std::size_t threads);

}  // namespace novelty
