// Row-wise vector checks and L2 normalisation, the CPU reference for kernels/normalize_rows.
#pragma once

#include <cstddef>
#include <vector>

namespace novelty {

/// Why a row cannot be normalised.
enum class RowProblem { none, not_finite, zero };

/// The one check of a vector row that every input of vectors goes through (files, requests,
/// ideas, attached vectors): not_finite when it holds NaN or Inf, zero when its norm (summed in
/// double) is 0, none otherwise.
RowProblem row_problem(const float* row, std::size_t dim);

/// What a problem means, for messages: "contains NaN or Inf", "is a zero vector", "".
const char* row_problem_text(RowProblem problem);

/// L2-normalises each of the n_rows rows of `rows` (row-major n_rows x dim) in place, computing
/// the norm in double precision. A row containing NaN or Inf, or whose norm is zero, is left
/// unchanged and reported in `problems` (resized to n_rows; RowProblem::none for good rows).
/// Returns the number of rows with a problem.
std::size_t normalize_rows(float* rows, std::size_t n_rows, std::size_t dim,
                           std::vector<RowProblem>& problems);

}  // namespace novelty
