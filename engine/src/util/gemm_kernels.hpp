// The entry points of the files compiled for one instruction set (bf16_gemm_avx512.cpp,
// int8_gemm_vnni.cpp), called only after CPUID said the CPU has it (bf16_gemm.cpp, int8_gemm.cpp).
// Raw arrays only; see bf16_gemm.hpp and int8_gemm.hpp for what they compute.
#pragma once

#include <cstddef>
#include <cstdint>

namespace novelty {

/// Whether bf16_gemm_avx512.cpp was compiled with the kernel (x86-64 with GCC or Clang).
bool bf16_avx512_compiled();
/// The AVX512-BF16 kernel (see bf16_gemm_avx512 in bf16_gemm.hpp): `words` holds `panels` panels
/// of `pairs` x 16 words, y has `out` columns.
void bf16_gemm_avx512_raw(const std::uint32_t* xw, std::size_t n, const std::uint32_t* words, std::size_t pairs,
                          std::size_t panels, std::size_t out, const float* bias, float* y);

/// Whether int8_gemm_vnni.cpp was compiled with the kernel (x86-64 with GCC or Clang).
bool int8_vnni_compiled();
/// The AVX512-VNNI kernel (see int8_gemm in int8_gemm.hpp): x as `steps` words a row of unsigned
/// bytes (q + 128), `words` as `panels` panels of `steps` x 16 words of signed bytes; y[r][c] =
/// fma(float(sum - 128 row_sum[c]), x_scale[r] * w_scale[c], bias[c] or 0), y has `out` columns.
void int8_gemm_vnni_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n, const std::uint32_t* words,
                        std::size_t steps, std::size_t panels, std::size_t out, const std::int32_t* row_sum,
                        const float* w_scale, const float* bias, float* y);

}  // namespace novelty
