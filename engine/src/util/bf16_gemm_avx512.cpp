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

#else

bool bf16_avx512_compiled() { return false; }

void bf16_gemm_avx512_raw(const std::uint32_t*, std::size_t, const std::uint32_t*, std::size_t, std::size_t,
                          std::size_t, const float*, float*) {}

#endif

}  // namespace novelty

#if defined(NOVELTY_BF16_AVX512)
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
#endif
