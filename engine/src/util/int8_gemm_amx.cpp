// The int8 GEMM for CPUs with AMX-INT8 (Sapphire Rapids and later): tdpbusd multiplies a tile of
// 16 rows x 64 unsigned bytes (x's words, q + 128) by a tile of 16 x 64 signed bytes (16 quads of
// a weight panel: the panels of int8_gemm.hpp are already laid out as AMX's B tiles, quad p of the
// 16 rows in 64 bytes) into 16 x 16 int32 sums, exactly as vpdpbusd does per lane; the sums then
// get the AVX-512 kernel's last step (subtract 128 x the row's sum of w, fma with the scales). So
// the outputs are the AVX-512 kernel's bit for bit. Only this file is compiled for AMX, by the
// target pragma below; it is called only when cpu_path() is amx (int8_gemm.cpp), which also means
// that the OS granted this process the tile state (cpu_path.cpp). Nothing from the standard
// library is used here (see packed_gemm_kernel.inc).
#include "util/gemm_kernels.hpp"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NOVELTY_INT8_AMX 1
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("amx-tile,amx-int8,avx512f,avx512vnni")
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("amx-tile,amx-int8,avx512f,avx512vnni"))), apply_to = function)
#endif
#include "util/amx_tiles.hpp"
#endif

namespace novelty {

#if defined(NOVELTY_INT8_AMX)

namespace {

constexpr std::size_t tile_rows = 16;   // rows of x a tile; also the rows of a panel
constexpr std::size_t tile_quads = 16;  // quads of the inner dimension a tile (64 bytes)
constexpr std::size_t panel_lanes = 16;

struct AmxProblem {
    const std::uint32_t* xw;
    const float* x_scale;
    const std::uint32_t* words;
    std::size_t steps;
    std::size_t out;
    const std::int32_t* row_sum;
    const float* w_scale;
    const float* bias;
    float* y;
};

// Row r of a block: sums[32] (two panels' lanes) plus the quads past the last whole tile by
// vpdpbusd, then y[row][col0 ..] = fma(float(sum - 128 row_sum), x_scale * w_scale, bias).
void finish_row(const AmxProblem& a, const std::int32_t* sums, std::size_t row, std::size_t col0, std::size_t cols) {
    const std::size_t tail0 = a.steps / tile_quads * tile_quads;
    const std::uint32_t* x = a.xw + row * a.steps;
    for (std::size_t j = 0; j * panel_lanes < cols; ++j) {
        const std::size_t col = col0 + j * panel_lanes;
        const std::uint32_t* w = a.words + (col / panel_lanes) * a.steps * panel_lanes;
        __m512i sum = _mm512_loadu_si512(sums + j * panel_lanes);
        for (std::size_t p = tail0; p < a.steps; ++p)
            sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi32(static_cast<int>(x[p])), _mm512_loadu_si512(w + p * panel_lanes));
        const std::size_t count = cols - j * panel_lanes < panel_lanes ? cols - j * panel_lanes : panel_lanes;
        const __mmask16 mask = static_cast<__mmask16>(count >= 16 ? 0xffffu : (1u << count) - 1u);
        const __m512i offset = _mm512_maskz_slli_epi32(mask, _mm512_maskz_loadu_epi32(mask, a.row_sum + col), 7);
        const __m512 exact = _mm512_maskz_cvtepi32_ps(mask, _mm512_sub_epi32(sum, offset));
        const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(a.x_scale[row]), _mm512_maskz_loadu_ps(mask, a.w_scale + col));
        const __m512 b = a.bias ? _mm512_maskz_loadu_ps(mask, a.bias + col) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(a.y + row * a.out + col, mask, _mm512_fmadd_ps(exact, scale, b));
    }
}

// Rows [r0, r0 + 16 * row_tiles) (row_tiles 1 or 2) against the panel(s) of columns [col0, col0 +
// cols) (cols <= 32: one panel, or two), over the whole tiles of the inner dimension.
void amx_block(const AmxProblem& a, std::size_t r0, std::size_t row_tiles, std::size_t col0, std::size_t cols) {
    const std::size_t whole = a.steps / tile_quads, stride = a.steps * 4;
    const std::uint32_t* x0 = a.xw + r0 * a.steps;
    const std::uint32_t* x1 = x0 + tile_rows * a.steps;
    const std::uint32_t* w0 = a.words + (col0 / panel_lanes) * a.steps * panel_lanes;
    const std::uint32_t* w1 = w0 + a.steps * panel_lanes;
    const bool two_panels = cols > panel_lanes, two_rows = row_tiles > 1;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (std::size_t k = 0; k < whole; ++k) {
        const std::size_t xq = k * tile_quads, wq = k * tile_quads * panel_lanes;
        _tile_loadd(4, x0 + xq, stride);
        _tile_loadd(6, w0 + wq, 64);
        _tile_dpbusd(0, 4, 6);
        if (two_rows) {
            _tile_loadd(5, x1 + xq, stride);
            _tile_dpbusd(2, 5, 6);
        }
        if (two_panels) {
            _tile_loadd(7, w1 + wq, 64);
            _tile_dpbusd(1, 4, 7);
            if (two_rows) _tile_dpbusd(3, 5, 7);
        }
    }
    alignas(64) std::int32_t sums[2 * tile_rows][2 * panel_lanes];  // [row][panel j lane i at 16 j + i]
    _tile_stored(0, &sums[0][0], sizeof sums[0]);
    _tile_stored(1, &sums[0][panel_lanes], sizeof sums[0]);
    _tile_stored(2, &sums[tile_rows][0], sizeof sums[0]);
    _tile_stored(3, &sums[tile_rows][panel_lanes], sizeof sums[0]);
    for (std::size_t r = 0; r < row_tiles * tile_rows; ++r) finish_row(a, sums[r], r0 + r, col0, cols);
}

}  // namespace

bool int8_amx_compiled() { return true; }

std::size_t int8_gemm_amx_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n,
                              const std::uint32_t* words, std::size_t steps, std::size_t panels, std::size_t out,
                              const std::int32_t* row_sum, const float* w_scale, const float* bias, float* y) {
    const AmxProblem a{xw, x_scale, words, steps, out, row_sum, w_scale, bias, y};
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

bool int8_amx_compiled() { return false; }

std::size_t int8_gemm_amx_raw(const std::uint32_t*, const float*, std::size_t, const std::uint32_t*, std::size_t,
                              std::size_t, std::size_t, const std::int32_t*, const float*, const float*, float*) {
    return 0;
}

#endif

}  // namespace novelty

#if defined(NOVELTY_INT8_AMX)
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
#endif
