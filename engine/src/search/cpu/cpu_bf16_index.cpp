// The CPU index with bf16 storage. Its rows are packed once into the bf16 GEMM's panels (16 rows a
// panel, util/bf16_gemm.hpp); every search runs the shared tile loop (tiled_topk.hpp) on screened
// similarities — vdpbf16ps products of the bf16 queries and rows where the CPU has AVX512-BF16,
// else sgemm on rows widened back to float32 — into ScreenedCollectors, and re-scores each
// query's candidates with exact_dot against the caller's float32 (or float16) rows. A row of the
// exact top k is always a candidate (screening.hpp), so results equal the f32 index's.
#include "search/cpu/cpu_bf16_index.hpp"

#include "search/cpu/screening.hpp"
#include "search/cpu/cpu_self_join.hpp"
#include "search/exact_rescore.hpp"
#include "search/cpu/tiled_topk.hpp"
#include "search/search_rules.hpp"
#include "util/bf16_gemm.hpp"
#include "util/parallel_for.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace novelty {

namespace {

constexpr std::size_t panel_rows = bf16_panel_rows;  // 16
constexpr std::size_t pack_chunk_rows = 64 * panel_rows;

// The rows in bf16 panels: panel q, pair p, lane i holds row 16q + i's values 2p and 2p + 1
// (words as in Bf16Panels); rows past n_rows are zero.
struct Bf16Rows {
    std::size_t n_rows = 0, dim = 0, pairs = 0, panels = 0;
    std::vector<std::uint32_t> words;
    ScreenNorms norms;  // maxima over the rows: the screening margin's bound

    const std::uint32_t* panel(std::size_t row) const { return words.data() + row / panel_rows * pairs * panel_rows; }
};

// Packs rows [r0, r0 + n); returns the maxima of their norms.
ScreenNorms pack_chunk(const VectorView& corpus, std::size_t r0, std::size_t n, Bf16Rows& out) {
    std::vector<float> buffer;
    const float* rows = rows_as_f32(corpus, r0, n, buffer);
    ScreenNorms maxima;
    for (std::size_t t = 0; t < n; ++t) maxima = max_of(maxima, screen_norms(rows + t * out.dim, out.dim, ScreenOperands::bf16));
    pack_bf16_panel_rows(rows, r0, n, out.dim, out.words.data());
    return maxima;
}

Bf16Rows pack_rows(const VectorView& corpus, std::size_t threads) {
    Bf16Rows out;
    out.n_rows = corpus.n_rows;
    out.dim = corpus.dim;
    out.pairs = (corpus.dim + 1) / 2;
    out.panels = (corpus.n_rows + panel_rows - 1) / panel_rows;
    out.words.assign(out.panels * out.pairs * panel_rows, 0u);
    const std::size_t n_chunks = (corpus.n_rows + pack_chunk_rows - 1) / pack_chunk_rows;
    std::vector<ScreenNorms> norms(n_chunks);
    parallel_for_blocks(n_chunks, threads, [&](std::size_t b) {
        const std::size_t r0 = b * pack_chunk_rows;
        norms[b] = pack_chunk(corpus, r0, std::min(pack_chunk_rows, corpus.n_rows - r0), out);
    });
    for (const ScreenNorms& m : norms) out.norms = max_of(out.norms, m);
    return out;
}

// Rows [c0, c0 + n) of the panels back in float32, n x dim.
void widen_rows(const Bf16Rows& rows, std::size_t c0, std::size_t n, std::vector<float>& out) {
    out.resize(n * rows.dim);
    for (std::size_t t = 0; t < n; ++t) {
        const std::uint32_t* src = rows.panel(c0 + t) + (c0 + t) % panel_rows;
        float* dst = out.data() + t * rows.dim;
        for (std::size_t p = 0; p < rows.pairs; ++p) {
            const std::uint32_t w = src[p * panel_rows];
            dst[2 * p] = from_bf16(static_cast<std::uint16_t>(w & 0xffffu));
            if (2 * p + 1 < rows.dim) dst[2 * p + 1] = from_bf16(static_cast<std::uint16_t>(w >> 16));
        }
    }
}

// sims [n x n_tile] = the screened products of x (n x dim float32 rows) with rows [c0, c0 +
// n_tile) (c0 a multiple of 16): by the kernel from x's bf16 pairs `packed`, or by sgemm from x
// and the rows widened into `widened`.
void screen_tile(const Bf16Rows& rows, bool use_kernel, const float* x, const std::uint32_t* packed, std::size_t n,
                 std::size_t c0, std::size_t n_tile, float* sims, std::vector<float>& widened) {
    if (use_kernel) {
        bf16_gemm_panel_range(packed, n, rows.panel(c0), rows.pairs, (n_tile + panel_rows - 1) / panel_rows, n_tile,
                              sims);
        return;
    }
    widen_rows(rows, c0, n_tile, widened);
    const int dim = static_cast<int>(rows.dim);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(n_tile), dim, 1.0f, x,
                dim, widened.data(), dim, 0.0f, sims, static_cast<int>(n_tile));
}

// The screened similarities of one block of queries to rows [c0, c0 + n_tile) (c0 a multiple
// of 16) into sims [block.n x n_tile].
struct ScreenProduct {
    const Bf16Rows& rows;
    const QueryBlock& block;
    bool use_kernel;
    std::vector<std::uint32_t> packed_queries;  // the kernel's bf16 pairs of the queries
    std::vector<float> widened;                 // the sgemm path's tile

    ScreenProduct(const Bf16Rows& r, const QueryBlock& b, bool kernel) : rows(r), block(b), use_kernel(kernel) {
        if (!use_kernel) return;
        packed_queries.resize(block.n * rows.pairs);
        pack_bf16_rows(block.vectors.data(), block.n, rows.dim, packed_queries.data());
    }

    void operator()(std::size_t c0, std::size_t n_tile, float* sims) {
        screen_tile(rows, use_kernel, block.vectors.data(), packed_queries.data(), block.n, c0, n_tile, sims, widened);
    }
};

TopK run_screened(const TopKProblem& problem, const Bf16Rows& rows, bool use_kernel, const ProgressFn& progress) {
    openblas_set_num_threads(1);  // our own threads call sgemm concurrently (the widened path)
    const auto products = [&rows, use_kernel](const QueryBlock& block) { return ScreenProduct(rows, block, use_kernel); };
    return screened_topk(problem, rows.norms, ScreenOperands::bf16, panel_rows, products, progress);
}

class CpuBf16SearchIndex final : public detail::IndexImpl {
public:
    CpuBf16SearchIndex(const VectorView& corpus, bool bf16_instructions, std::size_t threads)
        : corpus_(corpus), rows_(pack_rows(corpus, threads)), use_kernel_(bf16_instructions && cpu_has_avx512_bf16()) {}
    std::string name() const override { return "cpu"; }
    std::string label() const override { return "cpu-bf16"; }

    TopK search(const SearchQueries& queries, std::size_t k, const SearchTuning& tuning) override {
        return run_screened(search_problem(corpus_, queries, k, panel_tuning(tuning)), rows_, use_kernel_, {});
    }

    // As the f32 index: the symmetric join (half the products) within the memory budget, else
    // each row as a query against the others.
    SelfJoin self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const SearchTuning& tuning,
                       const ProgressFn& progress) override {
        const std::size_t budget = tuning.self_join_memory ? tuning.self_join_memory : default_self_join_memory;
        if (symmetric_join_bytes(n_rows, k_stored) <= budget)
            return symmetric_self_join(corpus_, n_rows, q, k_stored, tuning, progress, self_join_products());
        TopKProblem problem = self_join_problem(corpus_, n_rows, k_stored, panel_tuning(tuning));
        return self_join_from(run_screened(problem, rows_, use_kernel_, progress), n_rows, q);
    }

    TopK search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k,
                           const SearchTuning& tuning) override {
        return exact_candidates_topk(corpus_, queries, candidates, k, tuning.threads);
    }

private:
    SelfJoinProducts self_join_products() const {
        SelfJoinProducts products;
        products.operands = ScreenOperands::bf16;
        products.block_multiple = panel_rows;
        products.product = [this](const float* rows_i, std::size_t n_i, std::size_t j0, std::size_t n_j, float* sims) {
            thread_local std::vector<std::uint32_t> packed;
            thread_local std::vector<float> widened;
            if (use_kernel_) {
                packed.resize(n_i * rows_.pairs);
                pack_bf16_rows(rows_i, n_i, rows_.dim, packed.data());
            }
            screen_tile(rows_, use_kernel_, rows_i, packed.data(), n_i, j0, n_j, sims, widened);
        };
        return products;
    }

    // `tuning` with the corpus tile rounded up to whole panels.
    static SearchTuning panel_tuning(const SearchTuning& tuning) {
        SearchTuning t = tuning;
        const std::size_t tile = t.corpus_tile ? t.corpus_tile : default_corpus_tile;
        t.corpus_tile = (tile + panel_rows - 1) / panel_rows * panel_rows;
        return t;
    }

    VectorView corpus_;
    Bf16Rows rows_;
    bool use_kernel_;
};

}  // namespace

std::unique_ptr<detail::IndexImpl> make_cpu_bf16_index(const VectorView& corpus, bool bf16_instructions,
                                                       std::size_t threads) {
    return std::make_unique<CpuBf16SearchIndex>(corpus, bf16_instructions, threads);
}

}  // namespace novelty
