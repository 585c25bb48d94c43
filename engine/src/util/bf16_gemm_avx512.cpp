// The bf16 GEMM micro-kernel for CPUs with AVX512-BF16 (vdpbf16ps: 32 bf16 products summed into
// 16 float32 lanes per instruction). Only this file is compiled for that instruction set, by the
// target pragma below; it is called only after bf16_kernel_runs() said yes (bf16_gemm.cpp),
// so the binary still runs on every x86-64 CPU. Nothing from the standard library is used here
// (see packed_gemm_kernel.inc).
#include "util/gemm_kernels.hpp"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NOVELTY_BF16_AVX512 1
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bf16")
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bf16"))), apply_to = function)
#endif
#endif

#include "util/packed_gemm_kernel.inc"

namespace novelty {

#if defined(NOVELTY_BF16_AVX512)

namespace {

struct Avx512Bf16Ops {
    using acc = __m512;
    using words = __m512i;
    static constexpr int block_rows = 8;  // 8 x 2 sums in registers
    float* y;
    std::size_t ldy;
    const float* bias;
    acc zero() const { return _mm512_setzero_ps(); }
    words load(const std::uint32_t* p) const { return _mm512_loadu_si512(p); }
    acc dot(acc sum, std::uint32_t a, words b) const {
        return _mm512_dpbf16_ps(sum, (__m512bh)_mm512_set1_epi32(static_cast<int>(a)), (__m512bh)b);
    }
    void store(std::size_t row, std::size_t col, acc sum, std::size_t count) const {
        const __mmask16 mask = static_cast<__mmask16>(first_lanes(count));
        if (bias) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(mask, bias + col));
        _mm512_mask_storeu_ps(y + row * ldy + col, mask, sum);
    }
};

}  // namespace

bool bf16_avx512_compiled() { return true; }

void bf16_gemm_avx512_raw(const std::uint32_t* xw, std::size_t n, const std::uint32_t* words, std::size_t pairs,
                          std::size_t panels, std::size_t out, const float* bias, float* y) {
    Avx512Bf16Ops ops{y, out, bias};
    packed_gemm_with(ops, xw, n, words, pairs, panels, out);
}

void add_bias_avx512_raw(float* y, std::size_t rows, std::size_t out, const float* bias) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t o = 0; o < out; o += 16) {
            const __mmask16 mask = static_cast<__mmask16>(first_lanes(out - o < 16 ? out - o : 16));
            float* row = y + r * out + o;
            _mm512_mask_storeu_ps(row, mask, _mm512_add_ps(_mm512_maskz_loadu_ps(mask, row), _mm512_maskz_loadu_ps(mask, bias + o)));
        }
}

// The scalar rule in integer lanes (not vcvtneps2bf16, whose NaNs and flushed subnormals differ):
// rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16, a NaN's high half with the quiet bit set.
std::size_t bf16_round_avx512_raw(const float* x, std::size_t count, std::uint16_t* out) {
    const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff), quiet = _mm512_set1_epi32(0x0040);
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), infinity = _mm512_set1_epi32(0x7f800000);
    std::size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m512i bits = _mm512_castps_si512(_mm512_loadu_ps(x + i));
        const __m512i odd = _mm512_and_si512(_mm512_maskz_srli_epi32(0xffff, bits, 16), one);
        const __m512i rounded = _mm512_maskz_srli_epi32(0xffff, _mm512_add_epi32(_mm512_add_epi32(bits, bias), odd), 16);
        const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, magnitude), infinity);
        const __m512i nan_bits = _mm512_or_si512(_mm512_maskz_srli_epi32(0xffff, bits, 16), quiet);
        const __m512i result = _mm512_mask_mov_epi32(rounded, nan, nan_bits);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_maskz_cvtepi32_epi16(0xffff, result));
    }
    return i;
}

#else

bool bf16_avx512_compiled() { return false; }

void bf16_gemm_avx512_raw(const std::uint32_t*, std::size_t, const std::uint32_t*, std::size_t, std::size_t,
                          std::size_t, const float*, float*) {}

std::size_t bf16_round_avx512_raw(const float*, std::size_t, std::uint16_t*) { return 0; }

void add_bias_avx512_raw(float*, std::size_t, std::size_t, const float*) {}

#endif

}  // namespace novelty

#if defined(NOVELTY_BF16_AVX512)
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
#endif
