// The CPU index over a narrow copy of the corpus rows (bf16 or int8 storage): every product is
// screened on the copy by the shared tile loop (tiled_topk.hpp) into collectors that keep each row
// the screening margin cannot rule out of a query's top k (screening.hpp), and those candidates are
// re-scored with exact_dot against the caller's float32 (or float16) rows. A row of the exact top
// k is always a candidate, so results equal the f32 index's bit for bit. The self-join is the
// symmetric join on the same products within its memory budget, else each row as a query.
// Internal to the CPU backend.
//
// NarrowRows, the copy (cpu_bf16_index.cpp, cpu_int8_index.cpp), provides:
//   static constexpr ScreenOperands operands;  which screen_margin bounds its products
//   static constexpr std::size_t align;        rows per panel: tiles start at multiples of it
//   ScreenNorms norms;                         the maxima of the rows' screen_norms
//   struct Queries;                            queries prepared for the products, with scratch
//   void prepare(const float* x, std::size_t n, Queries& q) const;
//       x: n float32 rows of dim values, which must outlive q's use
//   void product(Queries& q, std::size_t c0, std::size_t n_tile, float* sims) const;
//       sims [n x n_tile] (row stride n_tile): the screened products with rows [c0, c0 + n_tile),
//       c0 a multiple of align
#pragma once

#include "search/cpu/cpu_self_join.hpp"
#include "search/cpu/screening.hpp"
#include "search/cpu/tiled_topk.hpp"
#include "search/exact_rescore.hpp"
#include "search/index_impl.hpp"
#include "search/search_rules.hpp"
#include "util/parallel_for.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace novelty {

/// The maxima of the rows' screen norms, packing rows [0, n_rows) in chunks of `chunk_rows` on
/// `threads` threads (0 = all): pack_chunk(r0, n) packs rows [r0, r0 + n) and returns their maxima.
template <class PackChunk>
ScreenNorms pack_in_chunks(std::size_t n_rows, std::size_t chunk_rows, std::size_t threads, PackChunk&& pack_chunk) {
    const std::size_t n_chunks = (n_rows + chunk_rows - 1) / chunk_rows;
    std::vector<ScreenNorms> norms(n_chunks);
    parallel_for_blocks(n_chunks, threads, [&](std::size_t b) {
        const std::size_t r0 = b * chunk_rows;
        norms[b] = pack_chunk(r0, std::min(chunk_rows, n_rows - r0));
    });
    ScreenNorms maxima;
    for (const ScreenNorms& m : norms) maxima = max_of(maxima, m);
    return maxima;
}

/// sims [n x n_tile] = x [n x dim] times tile [n_tile x dim] transposed, by sgemm: the narrow
/// copies' path on CPUs without their instructions (rows widened back to float32).
inline void sgemm_tile(const float* x, std::size_t n, const float* tile, std::size_t n_tile, std::size_t dim,
                       float* sims) {
    const int d = static_cast<int>(dim);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(n_tile), d, 1.0f, x, d,
                tile, d, 0.0f, sims, static_cast<int>(n_tile));
}

template <class NarrowRows>
class ScreenedSearchIndex final : public detail::IndexImpl {
public:
    /// `corpus` (f32 or f16 rows) must outlive the index; `rows` is its narrow copy.
    ScreenedSearchIndex(const VectorView& corpus, NarrowRows rows, std::string label)
        : corpus_(corpus), rows_(std::move(rows)), label_(std::move(label)) {}
    std::string name() const override { return "cpu"; }
    std::string label() const override { return label_; }

    TopK search(const SearchQueries& queries, std::size_t k, const SearchTuning& tuning) override {
        return run(search_problem(corpus_, queries, k, aligned(tuning)), {});
    }

    // As the f32 index: the symmetric join (half the products) within the memory budget, else
    // each row as a query against the others.
    SelfJoin self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const SearchTuning& tuning,
                       const ProgressFn& progress) override {
        const std::size_t budget = tuning.self_join_memory ? tuning.self_join_memory : default_self_join_memory;
        if (symmetric_join_bytes(n_rows, k_stored) <= budget)
            return symmetric_self_join(corpus_, n_rows, q, k_stored, tuning, progress, self_join_products());
        return self_join_from(run(self_join_problem(corpus_, n_rows, k_stored, aligned(tuning)), progress), n_rows, q);
    }

    TopK search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k,
                           const SearchTuning& tuning) override {
        return exact_candidates_topk(corpus_, queries, candidates, k, tuning.threads);
    }

private:
    // One block's queries, prepared once, against each corpus tile in turn.
    struct BlockProduct {
        const NarrowRows& rows;
        typename NarrowRows::Queries queries;
        BlockProduct(const NarrowRows& r, const QueryBlock& block) : rows(r) {
            rows.prepare(block.vectors.data(), block.n, queries);
        }
        void operator()(std::size_t c0, std::size_t n_tile, float* sims) { rows.product(queries, c0, n_tile, sims); }
    };

    TopK run(const TopKProblem& problem, const ProgressFn& progress) const {
        openblas_set_num_threads(1);  // our own threads call sgemm concurrently (the widened paths)
        const auto products = [this](const QueryBlock& block) { return BlockProduct(rows_, block); };
        return screened_topk(problem, rows_.norms, NarrowRows::operands, NarrowRows::align, products, progress);
    }

    SelfJoinProducts self_join_products() const {
        SelfJoinProducts products;
        products.operands = NarrowRows::operands;
        products.block_multiple = NarrowRows::align;
        products.product = [this](const float* rows_i, std::size_t n_i, std::size_t j0, std::size_t n_j, float* sims) {
            thread_local typename NarrowRows::Queries queries;
            rows_.prepare(rows_i, n_i, queries);
            rows_.product(queries, j0, n_j, sims);
        };
        return products;
    }

    // `tuning` with the corpus tile rounded up to whole panels.
    static SearchTuning aligned(const SearchTuning& tuning) {
        SearchTuning t = tuning;
        const std::size_t tile = t.corpus_tile ? t.corpus_tile : default_corpus_tile;
        t.corpus_tile = (tile + NarrowRows::align - 1) / NarrowRows::align * NarrowRows::align;
        return t;
    }

    VectorView corpus_;
    NarrowRows rows_;
    std::string label_;
};

}  // namespace novelty
