// exact_dot (exact_rescore.hpp) on AVX-512 or AVX2 registers: the same sums in the same order, so
// the same bits (tests/engine/search/exact_dot_test.cpp). Callers check the CPU path first
// (exact_dot_for in exact_rescore.hpp does); on x86-64 builds without GCC or Clang they return 0.
#pragma once

#include <cstddef>

namespace novelty {

float exact_dot_avx512(const float* a, const float* b, std::size_t dim);
float exact_dot_avx2(const float* a, const float* b, std::size_t dim);

}  // namespace novelty
