// The bf16 products of the bf16 screen (bf16_gemm_panel_range) for CPUs with AMX-BF16 (Sapphire
// Rapids and later): tdpbf16ps multiplies a tile of 16 rows x 32 bf16 values (x's pairs) by a tile
// of 16 pairs x 16 columns (16 pairs of a panel: Bf16Panels are laid out as AMX's B tiles as they
// are) into 16 x 16 float32 sums; the pairs past the last whole tile are added by AVX512-BF16's
// vdpbf16ps. Each step adds exact bf16 products to a float32 sum, so the screen's margin, which
// holds for float32 sums of those products in any order (search/cpu/screening.hpp), holds; the
// bits may differ from the vdpbf16ps kernel's (another order of the sums), which is why only the
// screen, whose candidates are re-scored exactly, uses it. Only this file is compiled for AMX-BF16,
// by the target pragma below; it is called only on the amx path of a CPU with AMX-BF16 and
// AVX512-BF16 (bf16_gemm.cpp). Nothing from the standard library is used here.
#include "util/gemm_kernels.hpp"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NOVELTY_BF16_AMX 1
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("amx-tile,amx-bf16,avx512f,avx512bf16")
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bf16"))), apply_to = function)
#endif
#include "util/amx_tiles.hpp"
#endif

namespace novelty {

#if defined(NOVELTY_BF16_AMX)

namespace {

constexpr std::size_t tile_rows = 16;   // rows of x a tile; also the rows of a panel
constexpr std::size_t tile_pairs = 16;  // pairs of the inner dimension a tile (64 bytes)
constexpr std::size_t panel_lanes = 16;

struct Bf16Problem {
    const std::uint32_t* xw;
    const std::uint32_t* words;
    std::size_t pairs;
    std::size_t out;
    float* y;
};

// Row `row` of a block: its tile sums plus the pairs past the last whole tile, stored.
void finish_row(const Bf16Problem& a, const float* sums, std::size_t row, std::size_t col0, std::size_t cols) {
    const std::size_t tail0 = a.pairs / tile_pairs * tile_pairs;
    const std::uint32_t* x = a.xw + row * a.pairs;
    for (std::size_t j = 0; j * panel_lanes < cols; ++j) {
        const std::size_t col = col0 + j * panel_lanes;
        const std::uint32_t* w = a.words + (col / panel_lanes) * a.pairs * panel_lanes;
        __m512 sum = _mm512_loadu_ps(sums + j * panel_lanes);
        for (std::size_t p = tail0; p < a.pairs; ++p)
            sum = _mm512_dpbf16_ps(sum, (__m512bh)_mm512_set1_epi32(static_cast<int>(x[p])),
                                   (__m512bh)_mm512_loadu_si512(w + p * panel_lanes));
        const std::size_t count = cols - j * panel_lanes < panel_lanes ? cols - j * panel_lanes : panel_lanes;
        const __mmask16 mask = static_cast<__mmask16>(count >= 16 ? 0xffffu : (1u << count) - 1u);
        _mm512_mask_storeu_ps(a.y + row * a.out + col, mask, sum);
    }
}

// Rows [r0, r0 + 16 row_tiles) against the panel(s) of columns [col0, col0 + cols), cols <= 32.
void amx_block(const Bf16Problem& a, std::size_t r0, std::size_t row_tiles, std::size_t col0, std::size_t cols) {
    const std::size_t whole = a.pairs / tile_pairs, stride = a.pairs * 4;
    const std::uint32_t* x0 = a.xw + r0 * a.pairs;
    const std::uint32_t* x1 = x0 + tile_rows * a.pairs;
    const std::uint32_t* w0 = a.words + (col0 / panel_lanes) * a.pairs * panel_lanes;
    const std::uint32_t* w1 = w0 + a.pairs * panel_lanes;
    const bool two_panels = cols > panel_lanes, two_rows = row_tiles > 1;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (std::size_t k = 0; k < whole; ++k) {
        const std::size_t xp = k * tile_pairs, wp = k * tile_pairs * panel_lanes;
        _tile_loadd(4, x0 + xp, stride);
        _tile_loadd(6, w0 + wp, 64);
        _tile_dpbf16ps(0, 4, 6);
        if (two_rows) {
            _tile_loadd(5, x1 + xp, stride);
            _tile_dpbf16ps(2, 5, 6);
        }
        if (two_panels) {
            _tile_loadd(7, w1 + wp, 64);
            _tile_dpbf16ps(1, 4, 7);
            if (two_rows) _tile_dpbf16ps(3, 5, 7);
        }
    }
    alignas(64) float sums[2 * tile_rows][2 * panel_lanes];
    _tile_stored(0, &sums[0][0], sizeof sums[0]);
    _tile_stored(1, &sums[0][panel_lanes], sizeof sums[0]);
    _tile_stored(2, &sums[tile_rows][0], sizeof sums[0]);
    _tile_stored(3, &sums[tile_rows][panel_lanes], sizeof sums[0]);
    for (std::size_t r = 0; r < row_tiles * tile_rows; ++r) finish_row(a, sums[r], r0 + r, col0, cols);
}

}  // namespace

bool bf16_amx_compiled() { return true; }

std::size_t bf16_gemm_amx_raw(const std::uint32_t* xw, std::size_t n, const std::uint32_t* words, std::size_t pairs,
                              std::size_t panels, std::size_t out, float* y) {
    const Bf16Problem a{xw, words, pairs, out, y};
    const std::size_t rows = n / tile_rows * tile_rows;
    if (rows == 0) return 0;
    amx::configure_tiles();
    for (std::size_t q = 0; q < panels; q += 2) {
        const std::size_t col0 = q * panel_lanes;
        const std::size_t cols = out - col0 < 2 * panel_lanes ? out - col0 : 2 * panel_lanes;
        for (std::size_t r0 = 0; r0 < rows; r0 += 2 * tile_rows)
            amx_block(a, r0, rows - r0 >= 2 * tile_rows ? 2 : 1, col0, cols);
    }
    _tile_release();
    return rows;
}

#else

bool bf16_amx_compiled() { return false; }

std::size_t bf16_gemm_amx_raw(const std::uint32_t*, std::size_t, const std::uint32_t*, std::size_t, std::size_t,
                              std::size_t, float*) {
    return 0;
}

#endif

}  // namespace novelty

#if defined(NOVELTY_BF16_AMX)
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
#endif
