// Matrix products in int8 on the CPU, for the encoder's linear layers: a weight W [out x in]
// (PyTorch's layout) quantized once per output row ("channel"), activations x [n x in] quantized
// per row (per token) on the way in, both symmetric (q = round(v * (127 / max|v|)), ties to even,
// in -127..127; scale = max|v| / 127), the integer products summed exactly in int32, and each output
// y[r][c] = fma(float(sum), x_scale[r] * w_scale[c], bias[c]). Internal to the engine.
//
// Two layouts, and on the first one kernel for each CPU path (novelty/util/cpu_path.hpp: chosen by
// CPUID at run time, never by build flags), all to the same integer sums:
//   - vnni (named after vpdpbusd, whose operands it suits): weight panels of 16 rows, in which
//     the activations' unsigned bytes q + 128 meet the weights' signed bytes; 128 x the weight row's
//     sum of q is subtracted from each sum. The kernels: AMX-INT8 tiles (int8_gemm_amx.cpp: the
//     panels are AMX's B tiles as they are), AVX512-VNNI's vpdpbusd (int8_gemm_vnni.cpp), AVX-VNNI's
//     vpdpbusd on 256-bit registers (int8_gemm_avxvnni.cpp), AVX2's vpmaddubsw + vpmaddwd
//     (int8_gemm_avx2.cpp), and on the f32 path a portable loop (slow);
//   - float32: the quantized values as floats through OpenBLAS sgemm, over slices of at most
//     1,024 inputs: every partial sum there is an integer of magnitude below 127 x 127 x 1,024 <
//     2^24, so float32 holds it exactly in any summation order, and the slices add in int32. It is
//     no faster than float32 (the encoder's int8 precision uses it on the f32 path, to give the
//     same vectors there).
// The sums are exact either way and the last step is the same fma, so all agree bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

/// Which of the two ways a quantized operand is laid out for.
enum class Int8Path { vnni, float32 };

/// vnni where int8_kernel_available() (the CPU path has an int8 kernel), else float32.
Int8Path best_int8_path();

/// A weight quantized per output row. scale[c] = max_i |W[c][i]| / 127 (0 for a row of zeros,
/// whose values are then all 0); row_sum[c] = sum_i q[c][i].
/// vnni: panels of 16 rows (rows past `out` zero), within a panel for each quad of inputs
/// (4p .. 4p + 3) 16 words, byte b of word i = q[16 panel + i][4p + b] (zero past `in`).
/// float32: values = q as floats, [out x in].
struct Int8Weights {
    Int8Path path = Int8Path::float32;
    std::size_t out = 0, in = 0;
    std::size_t quads = 0;   ///< ceil(in / 4)
    std::size_t panels = 0;  ///< ceil(out / 16)
    std::vector<float> scale;
    std::vector<std::int32_t> row_sum;
    std::vector<std::uint32_t> words;  ///< vnni only: panels * quads * 16
    std::vector<float> values;         ///< float32 only
    /// Per input: the factor the activations are multiplied by before they are quantized (the
    /// weights' columns were divided by it); empty for none.
    std::vector<float> input_factor;
};
/// Quantizes w [out x in] for `path` (Error for vnni on a CPU path without an int8 kernel, and naming the row for
/// a value that is not finite). With `input_factor`
/// (`in` positive values, or null), column i is divided by input_factor[i] first, and int8_gemm's
/// activations must be multiplied by it (quantize_int8_rows does, given the weights' factors):
/// the product is unchanged, but an input that is large in every token (an outlier channel)
/// is moved into the weights, which are quantized per output and can take it.
Int8Weights quantize_int8_weights(const float* w, std::size_t out, std::size_t in, Int8Path path,
                                  const float* input_factor = nullptr);

/// Rows of activations quantized per row, laid out for one path, with the scratch of the
/// products. vnni: words [n x ceil(in / 4)], byte b of word p = q[r][4p + b] + 128 (128 past
/// `in`); float32: values = q as floats [n x in].
struct Int8Rows {
    Int8Path path = Int8Path::float32;
    std::size_t n = 0, in = 0;
    std::vector<float> scale;  ///< [n]: max_i |x[r][i]| / 127
    std::vector<std::uint32_t> words;
    std::vector<float> values;
    std::vector<float> partial;       ///< float32 path: one slice's sums
    std::vector<std::int32_t> sums;   ///< float32 path: the exact sums
};
/// Quantizes x [n x in] into `rows` for `path`, reusing its buffers, each value multiplied by
/// input_factor[i] first when that is not null. A row of zeros gets scale 0; a value that is not
/// finite is an Error naming its row (token).
void quantize_int8_rows(const float* x, std::size_t n, std::size_t in, Int8Path path, Int8Rows& rows,
                        const float* input_factor = nullptr);

/// y[n x w.out] = the products of `x` (quantized for w.path, x.in == w.in) and `w`, with `bias`
/// (w.out values, or null for none); y has row stride w.out. Throws Error on mismatched shapes
/// or paths.
void int8_gemm(Int8Rows& x, const Int8Weights& w, const float* bias, float* y);

/// Quantizes one vector as quantize_int8_rows does (no factor): q[i] = round(v[i] * 127 / max|v|),
/// ties to even, in -127..127; returns the scale max|v| / 127 (0, every q 0, for zeros), or a
/// negative value, writing nothing, when a value is not finite.
float quantize_int8_values(const float* v, std::size_t in, std::int8_t* q);

/// y[x.n x out] (row stride out, no bias): the products of `x` (laid out for vnni) with `out`
/// rows held in vnni panels as Int8Weights::words holds them, `panels` panels (16 panels >= out >
/// 16 (panels - 1)) of `quads` x 16 words from `words` on, the rows' sums of q in row_sum and
/// their scales in w_scale (out values each): y[r][c] = fma(float(sum), x.scale[r] * w_scale[c], 0)
/// for the exact integer sum. By the kernel of cpu_path(), else (f32) by the portable loop (slow;
/// the same bits). The panels need no instructions to be laid out: a search
/// index packs them on any CPU. Throws Error when x is not laid out for vnni with `quads` words.
void int8_gemm_panel_range(const Int8Rows& x, const std::uint32_t* words, std::size_t quads, std::size_t panels,
                           std::size_t out, const std::int32_t* row_sum, const float* w_scale, float* y);

/// The vnni products by the portable loop in plain C++ (slow; for tests): the same sums and the
/// same last step as the kernel, on any CPU. `x` and `w` must be laid out for vnni.
void int8_gemm_vnni_portable(const Int8Rows& x, const Int8Weights& w, const float* bias, float* y);

}  // namespace novelty
