// Matrix products in bf16 on the CPU, for the encoder's linear layers and the bf16-screened
// search: one operand (weights, corpus rows) rounded to bfloat16 once and packed in panels, the
// other (activations, queries) rounded to bfloat16 on the way in, products accumulated in float32
// (the arithmetic of AVX512-BF16's vdpbf16ps). Internal to the engine.
//
// Two ways to compute the same rounded products, chosen at run time by the CPU path
// (novelty/util/cpu_path.hpp; never by build flags, so one binary is right on every x86-64 machine):
//   - avx512: a micro-kernel of vdpbf16ps over packed weight panels (bf16_gemm_avx512.cpp), on CPUs
//     with AVX512-BF16 (Cooper Lake, Sapphire Rapids and later, AMD Zen 4 and later) whose path is
//     avx512 or amx (bf16_kernel_available());
//   - float32: the rounded operands through OpenBLAS sgemm. The product of two bf16 values is
//     exact in float32, so this is the same arithmetic up to the order of the sums; it is no
//     faster than float32 (it exists to give the same vectors, and to test them, everywhere).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

/// bfloat16 bits of `v`, rounded to nearest even; a NaN stays a (quiet) NaN.
std::uint16_t to_bf16(float v);
/// The float32 value of bfloat16 bits (exact).
float from_bf16(std::uint16_t bits);
/// from_bf16(to_bf16(v)).
inline float round_to_bf16(float v) { return from_bf16(to_bf16(v)); }

/// Panel width of the packed weights: 16 output rows (one 512-bit register of float32 sums).
inline constexpr std::size_t bf16_panel_rows = 16;

/// A Linear layer's weight W [out x in] (PyTorch's layout) rounded to bf16 and packed: panels of
/// 16 output rows; within panel q, for each pair of input columns (2p, 2p+1), 16 32-bit words,
/// word i = bf16(W[16q + i][2p]) | bf16(W[16q + i][2p + 1]) << 16. Rows past `out` and the column
/// past an odd `in` are zero. words.size() = panels * pairs * 16.
struct Bf16Panels {
    std::size_t out = 0, in = 0;
    std::size_t pairs = 0;   ///< ceil(in / 2)
    std::size_t panels = 0;  ///< ceil(out / 16)
    std::vector<std::uint32_t> words;
};
Bf16Panels pack_bf16_panels(const float* w, std::size_t out, std::size_t in);

/// Packs the n rows of x [n x in] as rows [first_row, first_row + n) of a panel array laid out as
/// Bf16Panels::words (ceil(in / 2) pairs a panel), leaving the other rows' words as they are:
/// a large matrix can be packed in pieces, on several threads.
void pack_bf16_panel_rows(const float* x, std::size_t first_row, std::size_t n, std::size_t in, std::uint32_t* words);

/// Rows of activations x [n x in] rounded to bf16 and packed in pairs as the weights are:
/// xw[r * pairs + p] = bf16(x[r][2p]) | bf16(x[r][2p + 1]) << 16 (zero past an odd `in`).
void pack_bf16_rows(const float* x, std::size_t n, std::size_t in, std::uint32_t* xw);

/// True when this CPU (and its OS) runs AVX512-BF16 instructions and the build has the kernel,
/// whatever the CPU path (bf16_gemm_avx512 needs this; the dispatching calls below
/// bf16_kernel_available() too).
bool bf16_kernel_runs();

/// y[n x out] = bf16(x) * bf16(W)^T + bias, float32 sums over the pairs in order (per output:
/// sum += x[2p+1] w[2p+1], then += x[2p] w[2p], p = 0, 1, ...; then + bias). `xw` is x packed by
/// pack_bf16_rows; `bias` has w.out values or is null; y has row stride w.out.
/// bf16_gemm_avx512 needs bf16_kernel_runs() (it throws Error otherwise, and on builds for
/// other CPUs); bf16_gemm_portable computes the same sums in plain C++ (for tests: slow), so the
/// two agree bit for bit except where AVX512-BF16 flushes subnormals to zero.
void bf16_gemm_avx512(const std::uint32_t* xw, std::size_t n, const Bf16Panels& w, const float* bias, float* y);
void bf16_gemm_portable(const std::uint32_t* xw, std::size_t n, const Bf16Panels& w, const float* bias, float* y);

/// The same products as bf16_gemm_avx512 (needs bf16_kernel_runs(), else Error) for the encoder's
/// linear layers, by the fastest kernel of the CPU path: on the amx path of a CPU with AMX-BF16,
/// AMX-BF16 tiles for whole tiles of 16 rows of x (float32 sums of the same exact products in
/// another order, then + bias: the last bits may differ from bf16_gemm_avx512's) and
/// bf16_gemm_avx512 for the rows past them; elsewhere bf16_gemm_avx512 itself.
void bf16_gemm_best(const std::uint32_t* xw, std::size_t n, const Bf16Panels& w, const float* bias, float* y);

/// The same products against `panels` consecutive panels starting at `words` (a slice of
/// Bf16Panels::words beginning at a panel, each panel `pairs` x 16 words): y[n x out] with row
/// stride `out` (16 panels >= out > 16 (panels - 1)), no bias. By the AVX512-BF16 kernel when
/// bf16_kernel_available(), with AMX-BF16 tiles for whole tiles of 16 rows of x on the amx path
/// of a CPU with AMX-BF16 (float32 sums of the same exact products in another order: the last
/// bits may differ from the other kernels'; the bf16 screen allows for any order), else by the
/// portable loop (slow; same sums as the AVX512-BF16 kernel).
void bf16_gemm_panel_range(const std::uint32_t* xw, std::size_t n, const std::uint32_t* words, std::size_t pairs,
                           std::size_t panels, std::size_t out, float* y);

}  // namespace novelty
