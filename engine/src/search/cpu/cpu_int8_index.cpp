// The CPU index with int8 storage: each row quantized once, symmetrically with its own scale
// (quantize_int8_values), and packed into the int8 GEMM's panels of 16 rows (int8_gemm.hpp); every
// product screened on them by the screened index (screened_index.hpp) against the queries
// quantized the same way — vpdpbusd's exact integer sums times the two scales where the CPU has
// AVX512-VNNI, else sgemm on the dequantized values — and the candidates re-scored exactly.
#include "search/cpu/cpu_int8_index.hpp"

#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"
#include "search/cpu/screened_index.hpp"
#include "util/int8_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace novelty {

namespace {

constexpr std::size_t panel_rows = 16;
constexpr std::size_t pack_chunk_rows = 64 * panel_rows;
// vpdpbusd sums 255 x 127 per value in int32: exact up to 66,311 values.
constexpr std::size_t max_int8_dim = 65536;

// The rows in int8 panels as Int8Weights lays them out for vnni: panel p, quad t, lane i holds
// row 16p + i's values 4t .. 4t + 3 as bytes (zero past dim and past n_rows); per row its scale
// and its sum of q (zero past n_rows). The NarrowRows of screened_index.hpp.
struct Int8CorpusRows {
    static constexpr ScreenOperands operands = ScreenOperands::int8;
    static constexpr std::size_t align = panel_rows;

    std::size_t n_rows = 0, dim = 0, quads = 0, panels = 0;
    std::vector<std::uint32_t> words;
    std::vector<float> scale;
    std::vector<std::int32_t> row_sum;
    ScreenNorms norms;        // maxima over the rows: the screening margin's bound
    bool use_kernel = false;  // vpdpbusd; else sgemm on dequantized values

    // The queries quantized for the kernel; for the sgemm path also dequantized, with the tile.
    struct Queries {
        Int8Rows quantized;
        std::vector<float> values;
        std::vector<float> widened;
    };

    void prepare(const float* x, std::size_t n, Queries& q) const;
    void product(Queries& q, std::size_t c0, std::size_t n_tile, float* sims) const;
    // Row r's values dequantized (scale q, rounded to float32) into out[0, dim).
    void dequantize(std::size_t r, float* out) const;
};

// Quantizes and packs rows [r0, r0 + n); returns the maxima of their norms.
ScreenNorms pack_chunk(const VectorView& corpus, std::size_t r0, std::size_t n, Int8CorpusRows& out) {
    std::vector<float> buffer;
    const float* rows = rows_as_f32(corpus, r0, n, buffer);
    std::vector<std::int8_t> q(out.quads * 4, 0);
    ScreenNorms maxima;
    for (std::size_t t = 0; t < n; ++t) {
        const float* x = rows + t * out.dim;
        const std::size_t r = r0 + t;
        const float scale = quantize_int8_values(x, out.dim, q.data());
        if (scale < 0.0f)
            throw Error("int8 storage: corpus row " + std::to_string(r) + " holds a value that is not finite (inf or "
                        "NaN); the corpus's vectors are damaged: attach them again (corpus add-vectors) or re-embed");
        out.scale[r] = scale;
        std::int32_t sum = 0;
        for (std::size_t i = 0; i < out.dim; ++i) sum += q[i];
        out.row_sum[r] = sum;
        std::uint32_t* dst = out.words.data() + (r / panel_rows) * out.quads * panel_rows + r % panel_rows;
        for (std::size_t p = 0; p < out.quads; ++p) {
            std::uint32_t word;
            std::memcpy(&word, q.data() + 4 * p, 4);  // little-endian: byte b is value 4p + b
            dst[p * panel_rows] = word;
        }
        maxima = max_of(maxima, int8_screen_norms(x, q.data(), scale, out.dim));
    }
    return maxima;
}

Int8CorpusRows pack_rows(const VectorView& corpus, std::size_t threads) {
    if (corpus.dim > max_int8_dim)
        throw UsageError("int8 storage holds vectors of at most " + std::to_string(max_int8_dim) +
                             " dimensions, not " + std::to_string(corpus.dim) + "; use f32 or bf16",
                         "storage");
    Int8CorpusRows out;
    out.n_rows = corpus.n_rows;
    out.dim = corpus.dim;
    out.quads = (corpus.dim + 3) / 4;
    out.panels = (corpus.n_rows + panel_rows - 1) / panel_rows;
    out.words.assign(out.panels * out.quads * panel_rows, 0u);
    out.scale.assign(out.panels * panel_rows, 0.0f);
    out.row_sum.assign(out.panels * panel_rows, 0);
    out.norms = pack_in_chunks(corpus.n_rows, pack_chunk_rows, threads,
                               [&](std::size_t r0, std::size_t n) { return pack_chunk(corpus, r0, n, out); });
    return out;
}

void Int8CorpusRows::dequantize(std::size_t r, float* out) const {
    const std::uint32_t* src = words.data() + (r / panel_rows) * quads * panel_rows + r % panel_rows;
    for (std::size_t p = 0; p < quads; ++p) {
        const std::uint32_t w = src[p * panel_rows];
        for (std::size_t b = 0; b < 4 && 4 * p + b < dim; ++b)
            out[4 * p + b] = scale[r] * static_cast<float>(static_cast<std::int8_t>((w >> (8 * b)) & 0xffu));
    }
}

void Int8CorpusRows::prepare(const float* x, std::size_t n, Queries& q) const {
    quantize_int8_rows(x, n, dim, Int8Path::vnni, q.quantized);  // the layout needs no instructions
    if (use_kernel) return;
    q.values.resize(n * dim);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(q.quantized.words.data());
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t i = 0; i < dim; ++i)
            q.values[r * dim + i] =
                q.quantized.scale[r] * static_cast<float>(static_cast<int>(bytes[r * quads * 4 + i]) - 128);
}

void Int8CorpusRows::product(Queries& q, std::size_t c0, std::size_t n_tile, float* sims) const {
    if (use_kernel) {
        int8_gemm_panel_range(q.quantized, words.data() + (c0 / panel_rows) * quads * panel_rows, quads,
                              (n_tile + panel_rows - 1) / panel_rows, n_tile, row_sum.data() + c0, scale.data() + c0,
                              sims);
        return;
    }
    q.widened.resize(n_tile * dim);
    for (std::size_t t = 0; t < n_tile; ++t) dequantize(c0 + t, q.widened.data() + t * dim);
    sgemm_tile(q.values.data(), q.quantized.n, q.widened.data(), n_tile, dim, sims);
}

}  // namespace

std::unique_ptr<detail::IndexImpl> make_cpu_int8_index(const VectorView& corpus, bool vnni_instructions,
                                                       std::size_t threads) {
    Int8CorpusRows rows = pack_rows(corpus, threads);
    rows.use_kernel = vnni_instructions && int8_kernel_available();
    return std::make_unique<ScreenedSearchIndex<Int8CorpusRows>>(corpus, std::move(rows), "cpu-int8");
}

}  // namespace novelty
