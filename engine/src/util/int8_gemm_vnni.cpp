// The int8 GEMM micro-kernel for CPUs with AVX512-VNNI (vpdpbusd: 64 unsigned x signed byte
// products summed into 16 int32 lanes per instruction). Only this file is compiled for that
// instruction set, by the target pragma below; it is called only when cpu_path() is avx512 or amx
// (int8_gemm.cpp), so the binary still runs on every x86-64 CPU. Nothing from the standard
// library is used here (see packed_gemm_kernel.inc).
#include "util/gemm_kernels.hpp"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NOVELTY_INT8_VNNI 1
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vnni")
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vnni"))), apply_to = function)
#endif
#endif

#include "util/packed_gemm_kernel.inc"

namespace novelty {

#if defined(NOVELTY_INT8_VNNI)

namespace {

struct Avx512VnniOps {
    using acc = __m512i;
    using words = __m512i;
    static constexpr int block_rows = 8;  // 8 x 2 sums in registers
    const float* x_scale;
    const std::int32_t* row_sum;
    const float* w_scale;
    const float* bias;
    float* y;
    std::size_t ldy;
    acc zero() const { return _mm512_setzero_si512(); }
    words load(const std::uint32_t* p) const { return _mm512_loadu_si512(p); }
    // sum += the products of a's unsigned bytes with b's signed bytes. Written as asm because GCC
    // 12 copies every accumulator around _mm512_dpbusd_epi32 (two register moves a product, and
    // spills), which halved the kernel's speed; "+v" keeps each sum in one register.
    acc dot(acc sum, std::uint32_t a, words b) const {
        const __m512i broadcast = _mm512_set1_epi32(static_cast<int>(a));
        __asm__("vpdpbusd %2, %1, %0" : "+v"(sum) : "v"(broadcast), "v"(b));
        return sum;
    }
    // fma(float(sum - 128 row_sum), x_scale * w_scale, bias), as int8_output in int8_gemm.cpp.
    void store(std::size_t row, std::size_t col, acc sum, std::size_t count) const {
        const __mmask16 mask = static_cast<__mmask16>(first_lanes(count));
        // (the maskz forms: GCC 12 warns on the plain ones' undefined pass-through operand)
        const __m512i offset = _mm512_maskz_slli_epi32(mask, _mm512_maskz_loadu_epi32(mask, row_sum + col), 7);
        const __m512 exact = _mm512_maskz_cvtepi32_ps(mask, _mm512_sub_epi32(sum, offset));
        const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(x_scale[row]), _mm512_maskz_loadu_ps(mask, w_scale + col));
        const __m512 b = bias ? _mm512_maskz_loadu_ps(mask, bias + col) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(y + row * ldy + col, mask, _mm512_fmadd_ps(exact, scale, b));
    }
};

}  // namespace

bool int8_vnni_compiled() { return true; }

void int8_gemm_vnni_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n, const std::uint32_t* words,
                        std::size_t steps, std::size_t panels, std::size_t out, const std::int32_t* row_sum,
                        const float* w_scale, const float* bias, float* y) {
    Avx512VnniOps ops{x_scale, row_sum, w_scale, bias, y, out};
    packed_gemm_with(ops, xw, n, words, steps, panels, out);
}

#else

bool int8_vnni_compiled() { return false; }

void int8_gemm_vnni_raw(const std::uint32_t*, const float*, std::size_t, const std::uint32_t*, std::size_t,
                        std::size_t, std::size_t, const std::int32_t*, const float*, const float*, float*) {}

#endif

}  // namespace novelty

#if defined(NOVELTY_INT8_VNNI)
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
#endif
