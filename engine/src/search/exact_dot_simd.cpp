// exact_dot (exact_rescore.hpp) on vector registers, for the re-scoring of candidates: the same 16
// interleaved float32 partial sums (element c into sum c mod 16; the elements past the last whole
// 16 into sums 0, 1, ...), each product rounded and then added (never fused: the pragma below
// keeps the compiler from contracting them), and the same pairwise reduction in plain code, so the
// same bits. Sums past dim's last element add 0 * 0 = +0, which leaves a float32 sum unchanged
// (a sum started at +0 is never -0). Only this file is compiled for AVX2 and AVX-512, by target
// attributes on its functions; exact_rescore.cpp calls them only on a CPU path that has them.
#include "search/exact_dot_simd.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NOVELTY_EXACT_DOT_SIMD 1
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace novelty {

namespace {

// The reduction of exact_dot: lane[j] += lane[j + width] for width 8, 4, 2, 1.
inline float reduce_lanes(float* lane) {
    for (std::size_t width = 8; width > 0; width /= 2)
        for (std::size_t j = 0; j < width; ++j) lane[j] += lane[j + width];
    return lane[0];
}

}  // namespace

#if defined(NOVELTY_EXACT_DOT_SIMD)

__attribute__((target("avx512f"))) float exact_dot_avx512(const float* a, const float* b, std::size_t dim) {
    __m512 sum = _mm512_setzero_ps();
    std::size_t c = 0;
    for (; c + 16 <= dim; c += 16) sum = _mm512_add_ps(sum, _mm512_mul_ps(_mm512_loadu_ps(a + c), _mm512_loadu_ps(b + c)));
    if (c < dim) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (dim - c)) - 1u);
        sum = _mm512_add_ps(sum, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, a + c), _mm512_maskz_loadu_ps(mask, b + c)));
    }
    alignas(64) float lane[16];
    _mm512_store_ps(lane, sum);
    return reduce_lanes(lane);
}

__attribute__((target("avx2"))) float exact_dot_avx2(const float* a, const float* b, std::size_t dim) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    std::size_t c = 0;
    for (; c + 16 <= dim; c += 16) {
        lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(a + c), _mm256_loadu_ps(b + c)));
        hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_loadu_ps(a + c + 8), _mm256_loadu_ps(b + c + 8)));
    }
    if (c < dim) {
        const std::size_t rem = dim - c;
        const __m256i lane_index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i mask_lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rem)), lane_index);
        const __m256i mask_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rem) - 8), lane_index);
        lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_maskload_ps(a + c, mask_lo), _mm256_maskload_ps(b + c, mask_lo)));
        if (rem > 8)
            hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_maskload_ps(a + c + 8, mask_hi),
                                                 _mm256_maskload_ps(b + c + 8, mask_hi)));
    }
    alignas(32) float lane[16];
    _mm256_store_ps(lane, lo);
    _mm256_store_ps(lane + 8, hi);
    return reduce_lanes(lane);
}

#else

float exact_dot_avx512(const float*, const float*, std::size_t) { return 0.0f; }
float exact_dot_avx2(const float*, const float*, std::size_t) { return 0.0f; }

#endif

}  // namespace novelty

#if defined(NOVELTY_EXACT_DOT_SIMD)
#pragma GCC pop_options
#endif
