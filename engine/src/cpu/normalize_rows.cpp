#include "novelty/vectors.hpp"

#include <cmath>

namespace novelty {

std::size_t normalize_rows(float* rows, std::size_t n_rows, std::size_t dim,
                           std::vector<RowProblem>& problems) {
    problems.assign(n_rows, RowProblem::none);
    std::size_t n_bad = 0;
    for (std::size_t r = 0; r < n_rows; ++r) {
        float* row = rows + r * dim;
        double sum_sq = 0.0;
        bool finite = true;
        for (std::size_t c = 0; c < dim; ++c) {
            if (!std::isfinite(row[c])) {
                finite = false;
                break;
            }
            sum_sq += static_cast<double>(row[c]) * row[c];
        }
        if (!finite) {
            problems[r] = RowProblem::not_finite;
        } else if (sum_sq == 0.0) {
            problems[r] = RowProblem::zero;
        } else {
            const double inv = 1.0 / std::sqrt(sum_sq);
            for (std::size_t c = 0; c < dim; ++c) row[c] = static_cast<float>(row[c] * inv);
            continue;
        }
        ++n_bad;
    }
    return n_bad;
}

}  // namespace novelty
