// Row-wise vector checks and L2 normalisation, the CPU reference for kernels/normalize_rows.
#pragma once

#include <cstddef>
#include <vector>

namespace novelty {

/// Why a row cannot be normalised.
enum class RowProblem { none, not_finite, zero };

/// L2-normalises each of the n_rows rows of `rows` (row-major n_rows x dim) in place, computing
/// the norm in double precision. A row containing NaN or Inf, or whose norm is zero, is left
/// unchanged and reported in `problems` (resized to n_rows; RowProblem::none for good rows).
/// Returns the number of rows with a problem.
std::size_t normalize_rows(float* rows, std::size_t n_rows, std::size_t dim,
                           std::vector<RowProblem>& problems);

}  // namespace novelty
