// The entry points of the files compiled for one instruction set (bf16_gemm_avx512.cpp,
// bf16_gemm_amx.cpp, int8_gemm_amx.cpp, int8_gemm_vnni.cpp, int8_gemm_avxvnni.cpp, int8_gemm_avx2.cpp), called only
// when cpu_path() says the CPU runs it (bf16_gemm.cpp, int8_gemm.cpp; novelty/util/cpu_path.hpp).
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

/// Whether bf16_gemm_amx.cpp was compiled with its kernel.
/// The first `count` floats of `x` rounded to bf16 (nearest, ties to even; a NaN made quiet, as
/// bf16_gemm.cpp's scalar rounding) in 16 lanes at a time, written as `count` 16-bit values from
/// `out`; returns how many it did (a multiple of 16; 0 when not compiled), the caller rounds the rest.
std::size_t bf16_round_avx512_raw(const float* x, std::size_t count, std::uint16_t* out);

/// y[r][o] += bias[o] for `rows` rows of `out` values (row stride `out`), 16 lanes at a time (the
/// same sums as the scalar loop); does nothing when not compiled (callers check bf16_kernel_runs()).
void add_bias_avx512_raw(float* y, std::size_t rows, std::size_t out, const float* bias);

bool bf16_amx_compiled();
/// The bf16 screen's products (bf16_gemm_panel_range, no bias) by AMX-BF16 tiles for the first n
/// rounded down to a multiple of 16 rows of x; returns how many rows it did, the caller does the
/// others. The sums' order differs from the AVX512-BF16 kernel's (so may their last bits).
std::size_t bf16_gemm_amx_raw(const std::uint32_t* xw, std::size_t n, const std::uint32_t* words, std::size_t pairs,
                              std::size_t panels, std::size_t out, float* y);

/// Whether int8_gemm_vnni.cpp was compiled with the kernel (x86-64 with GCC or Clang).
bool int8_vnni_compiled();
/// The AVX512-VNNI kernel (see int8_gemm in int8_gemm.hpp): x as `steps` words a row of unsigned
/// bytes (q + 128), `words` as `panels` panels of `steps` x 16 words of signed bytes; y[r][c] =
/// fma(float(sum - 128 row_sum[c]), x_scale[r] * w_scale[c], bias[c] or 0), y has `out` columns.
void int8_gemm_vnni_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n, const std::uint32_t* words,
                        std::size_t steps, std::size_t panels, std::size_t out, const std::int32_t* row_sum,
                        const float* w_scale, const float* bias, float* y);

/// Whether int8_gemm_avxvnni.cpp / int8_gemm_avx2.cpp / int8_gemm_amx.cpp was compiled with its kernel.
bool int8_avxvnni_compiled();
bool int8_avx2_compiled();
bool int8_amx_compiled();
/// The same products as int8_gemm_vnni_raw, by AVX-VNNI on 256-bit registers, or by AVX2.
void int8_gemm_avxvnni_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n, const std::uint32_t* words,
                           std::size_t steps, std::size_t panels, std::size_t out, const std::int32_t* row_sum,
                           const float* w_scale, const float* bias, float* y);
void int8_gemm_avx2_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n, const std::uint32_t* words,
                        std::size_t steps, std::size_t panels, std::size_t out, const std::int32_t* row_sum,
                        const float* w_scale, const float* bias, float* y);
/// The same products by AMX-INT8 tiles for the first n rounded down to a multiple of 16 rows of x
/// (the tiles' height); returns how many rows it did, the caller does the others. Needs the tile
/// state granted by the OS (cpu_path.cpp asks for it).
std::size_t int8_gemm_amx_raw(const std::uint32_t* xw, const float* x_scale, std::size_t n,
                              const std::uint32_t* words, std::size_t steps, std::size_t panels, std::size_t out,
                              const std::int32_t* row_sum, const float* w_scale, const float* bias, float* y);

}  // namespace novelty
