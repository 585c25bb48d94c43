// Finding the entries of a similarity row that beat a threshold: the filter in front of the
// top-k heaps. Vectorised; an AVX2 variant is chosen at run time when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace novelty {

/// Writes to `out` the indices j in [0, n) with values[j] >= threshold, in increasing order, and
/// returns how many. `out` must have room for n indices. NaN never passes.
std::size_t scan_at_least(const float* values, std::size_t n, float threshold, std::uint32_t* out);

/// Writes to `out` the indices j in [0, n) with values[j] >= thresholds[j] (one threshold per
/// entry), in increasing order, and returns how many. NaN never passes.
std::size_t scan_at_least_each(const float* values, const float* thresholds, std::size_t n, std::uint32_t* out);

}  // namespace novelty
