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
/// In place softmax of each of `rows` rows of `cols` values.
void softmax_rows(float* x, std::size_t rows, std::size_t cols);

}  // namespace novelty::encoder
