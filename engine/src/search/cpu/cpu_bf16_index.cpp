// The CPU index with bf16 storage: the rows packed once into the bf16 GEMM's panels (16 rows a
// panel, util/bf16_gemm.hpp), every product screened on them — vdpbf16ps products of the bf16
// queries and rows where the CPU has AVX512-BF16, else sgemm on rows widened back to float32 —
// by the screened index (screened_index.hpp), which re-scores the candidates exactly.
#include "search/cpu/cpu_bf16_index.hpp"

#include "novelty/util/cpu_path.hpp"
#include "search/cpu/screened_index.hpp"
#include "util/bf16_gemm.hpp"

#include <algorithm>
#include <vector>

namespace novelty {

namespace {

constexpr std::size_t panel_rows = bf16_panel_rows;  // 16
constexpr std::size_t pack_chunk_rows = 64 * panel_rows;

// The rows in bf16 panels: panel q, pair p, lane i holds row 16q + i's values 2p and 2p + 1
// (words as in Bf16Panels); rows past n_rows are zero. The NarrowRows of screened_index.hpp.
struct Bf16Rows {
    static constexpr ScreenOperands operands = ScreenOperands::bf16;
    static constexpr std::size_t align = panel_rows;

    std::size_t n_rows = 0, dim = 0, pairs = 0, panels = 0;
    std::vector<std::uint32_t> words;
    ScreenNorms norms;  // maxima over the rows: the screening margin's bound
    bool use_kernel = false;  // vdpbf16ps; else sgemm on widened rows

    // The queries as float32 rows and, for the kernel, as bf16 pairs; the sgemm path's tile.
    struct Queries {
        const float* x = nullptr;
        std::size_t n = 0;
        std::vector<std::uint32_t> packed;
        std::vector<float> widened;
    };

    const std::uint32_t* panel(std::size_t row) const { return words.data() + row / panel_rows * pairs * panel_rows; }
    void prepare(const float* x, std::size_t n, Queries& q) const;
    void product(Queries& q, std::size_t c0, std::size_t n_tile, float* sims) const;
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
    out.norms = pack_in_chunks(corpus.n_rows, pack_chunk_rows, threads,
                               [&](std::size_t r0, std::size_t n) { return pack_chunk(corpus, r0, n, out); });
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

void Bf16Rows::prepare(const float* x_rows, std::size_t n_rows_x, Queries& q) const {
    q.x = x_rows;
    q.n = n_rows_x;
    if (!use_kernel) return;
    q.packed.resize(n_rows_x * pairs);
    pack_bf16_rows(x_rows, n_rows_x, dim, q.packed.data());
}

// By the kernel from the queries' bf16 pairs, or by sgemm from the float32 queries and the rows
// widened into q.widened.
void Bf16Rows::product(Queries& q, std::size_t c0, std::size_t n_tile, float* sims) const {
    if (use_kernel) {
        bf16_gemm_panel_range(q.packed.data(), q.n, panel(c0), pairs, (n_tile + panel_rows - 1) / panel_rows, n_tile,
                              sims);
        return;
    }
    widen_rows(*this, c0, n_tile, q.widened);
    sgemm_tile(q.x, q.n, q.widened.data(), n_tile, dim, sims);
}

}  // namespace

std::unique_ptr<detail::IndexImpl> make_cpu_bf16_index(const VectorView& corpus, bool bf16_instructions,
                                                       std::size_t threads) {
    Bf16Rows rows = pack_rows(corpus, threads);
    rows.use_kernel = bf16_instructions && bf16_kernel_available();
    return std::make_unique<ScreenedSearchIndex<Bf16Rows>>(corpus, std::move(rows), "cpu-bf16");
}

}  // namespace novelty
