// Element-wise exp, GELU and softmax over arrays, in 8-wide vectors (an AVX2 variant chosen at
// run time). Accuracy: exp relative error below 2e-7 on [-87, 88] (inputs outside are clamped);
// erf absolute error below 3e-7 (Abramowitz-Stegun 7.1.26), well inside float32 model tolerances.
#pragma once

#include <cstddef>

namespace novelty::encoder {

/// out[i] = exp(x[i]), x clamped to [-87, 88].
void exp_array(const float* x, float* out, std::size_t n);
/// In place: x = x * 0.5 * (1 + erf(x / sqrt(2))), the exact (erf) GELU of BERT.
void gelu_in_place(float* x, std::size_t n);
/// In place softmax of each of `rows` rows of `cols` values: exp(x - max) over the sum of the
/// row's exps, which are added in 8 lanes (column c in lane c mod 8, the lanes then in order, the
/// last cols mod 8 columns after them): the same bits on every CPU, near float32's rounding of
/// the exact softmax (relative error about 1e-6).
void softmax_rows(float* x, std::size_t rows, std::size_t cols);

}  // namespace novelty::encoder
