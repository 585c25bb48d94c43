#include "search/cpu/exact_rescore.hpp"

#include "novelty/util/half.hpp"

#include <algorithm>
#include <limits>

namespace novelty {

const float* row_as_f32(const VectorView& view, std::size_t row, std::vector<float>& buffer) {
    if (view.dtype == DType::f32) return static_cast<const float*>(view.data) + row * view.dim;
    buffer.resize(view.dim);
    const auto* src = static_cast<const std::uint16_t*>(view.data) + row * view.dim;
    for (std::size_t c = 0; c < view.dim; ++c) buffer[c] = half_to_float(src[c]);
    return buffer.data();
}

std::size_t rescore_best(const float* query, const VectorView& corpus, ScoredRow* best, std::size_t n, std::size_t k,
                         std::int64_t* rows, float* sims) {
    std::vector<float> buffer;
    for (std::size_t i = 0; i < n; ++i)
        best[i].sim = exact_dot(query, row_as_f32(corpus, static_cast<std::size_t>(best[i].row), buffer), corpus.dim);
    std::sort(best, best + n, ranks_before);
    const std::size_t count = std::min(n, k);
    write_padded(best, count, k, rows, sims);
    return count;
}

}  // namespace novelty
