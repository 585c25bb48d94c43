#include "novelty/corpus/vectors.hpp"

#include <cmath>

namespace novelty {

RowProblem row_problem(const float* row, std::size_t dim) {
    double sum_sq = 0.0;
    for (std::size_t c = 0; c < dim; ++c) {
        if (!std::isfinite(row[c])) return RowProblem::not_finite;
        sum_sq += static_cast<double>(row[c]) * row[c];
    }
    return sum_sq == 0.0 ? RowProblem::zero : RowProblem::none;
}

const char* row_problem_text(RowProblem problem) {
    switch (problem) {
        case RowProblem::not_finite: return "contains NaN or Inf";
        case RowProblem::zero: return "is a zero vector";
        case RowProblem::none: break;
    }
    return "";
}

std::size_t normalize_rows(float* rows, std::size_t n_rows, std::size_t dim,
                           std::vector<RowProblem>& problems) {
    problems.assign(n_rows, RowProblem::none);
    std::size_t n_bad = 0;
    for (std::size_t r = 0; r < n_rows; ++r) {
        float* row = rows + r * dim;
        problems[r] = row_problem(row, dim);
        if (problems[r] != RowProblem::none) {
            ++n_bad;
            continue;
        }
        double sum_sq = 0.0;
        for (std::size_t c = 0; c < dim; ++c) sum_sq += static_cast<double>(row[c]) * row[c];
        const double inv = 1.0 / std::sqrt(sum_sq);
        for (std::size_t c = 0; c < dim; ++c) row[c] = static_cast<float>(row[c] * inv);
    }
    return n_bad;
}

}  // namespace novelty
