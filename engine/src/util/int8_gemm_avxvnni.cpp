// The int8 GEMM micro-kernel for CPUs with AVX-VNNI (vpdpbusd on 256-bit registers; Alder Lake
// and later, AMD Zen 5), from int8_ymm_ops.inc. Only this file is compiled for those instructions,
// by the target pragma below; it is called only when cpu_path() >= CpuPath::avxvnni (int8_gemm.cpp),
// so the binary still runs on every x86-64 CPU. Nothing from the standard library is used here
// (see packed_gemm_kernel.inc).
#include "util/gemm_kernels.hpp"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NOVELTY_INT8_AVXVNNI 1
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx2,fma,avxvnni")
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,avxvnni"))), apply_to = function)
#endif
#include "util/int8_ymm_ops.inc"
#endif

#include "util/packed_gemm_kernel.inc"

namespace novelty {

#if defined(NOVELTY_INT8_AVXVNNI)

bool int8_avxvnni_compiled() { return true; }

void int8_gemm_avxvnni_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n, const std::uint32_t* words,
                        std::size_t steps, std::size_t panels, std::size_t out, const std::int32_t* row_sum,
                        const float* w_scale, const float* bias, float* y) {
    YmmInt8Ops<true> ops{x_scale, row_sum, w_scale, bias, y, out};
    packed_gemm_with(ops, xw, n, words, steps, panels, out);
}

#else

bool int8_avxvnni_compiled() { return false; }

void int8_gemm_avxvnni_raw(const std::uint32_t*, const float*, std::size_t, const std::uint32_t*, std::size_t,
                        std::size_t, std::size_t, const std::int32_t*, const float*, const float*, float*) {}

#endif

}  // namespace novelty

#if defined(NOVELTY_INT8_AVXVNNI)
#if defined(__clang__)
#pragma clang attribute pop
#endif
#pragma GCC pop_options
#endif
