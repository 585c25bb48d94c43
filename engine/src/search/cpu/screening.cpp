#include "search/cpu/screening.hpp"

#include "search/exact_rescore.hpp"
#include "util/bf16_gemm.hpp"
#include "util/int8_gemm.hpp"
#include "util/parallel_for.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace novelty {

namespace {

// g(m) = m e / (1 - m e), e = 2^-24: the relative bound of m float32 roundings.
double gamma32(std::size_t m) {
    const double me = std::ldexp(static_cast<double>(m), -24);
    return me < 0.5 ? me / (1 - me) : std::numeric_limits<double>::infinity();
}

constexpr float negative_infinity = -std::numeric_limits<float>::infinity();

constexpr std::size_t int8_extra_roundings = 3;

// |x|, |x'| and |x - x'| in double, x'[c] = rounded(c).
template <class Rounded>
ScreenNorms norms_of(const float* x, std::size_t dim, Rounded&& rounded) {
    double norm2 = 0, rounded2 = 0, residual2 = 0;
    for (std::size_t c = 0; c < dim; ++c) {
        const double v = x[c], r = rounded(c);
        norm2 += v * v;
        rounded2 += r * r;
        residual2 += (v - r) * (v - r);
    }
    ScreenNorms out;
    out.norm = std::sqrt(norm2);
    out.rounded = std::sqrt(rounded2);
    out.residual = std::sqrt(residual2);
    return out;
}

}  // namespace

ScreenNorms int8_screen_norms(const float* x, const std::int8_t* q, float scale, std::size_t dim) {
    ScreenNorms out;
    if (scale < 0.0f) {
        out.norm = out.rounded = out.residual = std::numeric_limits<double>::infinity();
    } else {
        // scale q[c] is exact in double: 24 x 7 bits.
        out = norms_of(x, dim, [&](std::size_t c) { return static_cast<double>(scale) * q[c]; });
    }
    out.extra_roundings = int8_extra_roundings;
    return out;
}

ScreenNorms screen_norms(const float* x, std::size_t dim, ScreenOperands operands) {
    switch (operands) {
        case ScreenOperands::int8: {
            thread_local std::vector<std::int8_t> q;
            q.resize(dim);
            const float scale = quantize_int8_values(x, dim, q.data());
            return int8_screen_norms(x, q.data(), scale, dim);
        }
        case ScreenOperands::bf16:
            return norms_of(x, dim, [x](std::size_t c) { return static_cast<double>(round_to_bf16(x[c])); });
        case ScreenOperands::f32: break;
    }
    return norms_of(x, dim, [x](std::size_t c) { return static_cast<double>(x[c]); });
}

ScreenNorms max_of(const ScreenNorms& a, const ScreenNorms& b) {
    ScreenNorms out;
    out.norm = std::max(a.norm, b.norm);
    out.rounded = std::max(a.rounded, b.rounded);
    out.residual = std::max(a.residual, b.residual);
    out.extra_roundings = std::max(a.extra_roundings, b.extra_roundings);
    return out;
}

ScreenNorms max_screen_norms(const VectorView& rows, ScreenOperands operands, std::size_t threads) {
    constexpr std::size_t chunk = 4096;
    const std::size_t n_chunks = (rows.n_rows + chunk - 1) / chunk;
    std::vector<ScreenNorms> maxima(n_chunks);
    parallel_for_blocks(n_chunks, threads, [&](std::size_t b) {
        std::vector<float> buffer;
        const std::size_t r0 = b * chunk, n = std::min(chunk, rows.n_rows - r0);
        const float* x = rows_as_f32(rows, r0, n, buffer);
        for (std::size_t t = 0; t < n; ++t) maxima[b] = max_of(maxima[b], screen_norms(x + t * rows.dim, rows.dim, operands));
    });
    ScreenNorms largest;
    for (const ScreenNorms& m : maxima) largest = max_of(largest, m);
    return largest;
}

double screen_margin(std::size_t dim, const ScreenNorms& query, const ScreenNorms& rows) {
    const double q_any = std::max(query.norm, query.rounded), c_any = std::max(rows.norm, rows.rounded);
    const double rounding = q_any * rows.residual + rows.norm * query.residual;
    const std::size_t extra = std::max(query.extra_roundings, rows.extra_roundings);
    const double sums = gamma32(dim + extra) * q_any * rows.rounded + gamma32(dim + 1) * query.norm * rows.norm;
    const double flushed = std::ldexp(static_cast<double>(dim), -124) * (q_any + c_any + 1);
    const double margin = rounding + sums + flushed;
    if (!std::isfinite(margin)) return std::numeric_limits<double>::infinity();
    return margin + std::ldexp(margin, -20);
}

float float_at_most(double value) {
    float f = static_cast<float>(value);
    if (static_cast<double>(f) > value) f = std::nextafter(f, negative_infinity);
    return f;
}

ScreenedCollector::ScreenedCollector(ScoredRow* storage, std::size_t k, double spread)
    : heap_(storage, k), storage_(storage), k_(k), spread_(spread), threshold_(negative_infinity),
      prune_at_(2 * k + 32), floor_(negative_infinity) {}

void ScreenedCollector::bound_memory(const ExactScorer* scorer, std::int64_t query) {
    scorer_ = scorer;
    query_ = query;
}

void ScreenedCollector::refresh_threshold(float kth_best) {
    const float screened = kth_best == negative_infinity ? negative_infinity
                                                         : float_at_most(static_cast<double>(kth_best) - spread_);
    threshold_ = std::max(screened, floor_);
}

void ScreenedCollector::push(float sim, std::int64_t row) {
    if (sim < threshold_) return;
    if (scorer_ && kept_.capacity() < prune_at_) kept_.reserve(prune_at_);
    kept_.push_back(ScoredRow{sim, static_cast<std::int32_t>(row)});
    const float before = heap_.threshold();
    heap_.push(sim, row);
    if (heap_.threshold() != before) refresh_threshold(heap_.threshold());
    if (kept_.size() >= prune_at_) prune(true);
}

// Drops the kept offers below the threshold; when most survive, keeps the exact best k of them
// (bounded) or waits for twice as many.
void ScreenedCollector::prune(bool may_compact) {
    const float cut = threshold_;
    kept_.erase(std::remove_if(kept_.begin(), kept_.end(), [cut](const ScoredRow& r) { return r.sim < cut; }),
                kept_.end());
    if (kept_.size() <= prune_at_ / 2 || !may_compact) return;
    if (scorer_) keep_exact_best();
    else prune_at_ *= 2;
}

namespace {

// The offers kept by keep_exact_best hold their exact similarity, marked by this bit of the row
// (rows are below 2^31). Pruning compares it with the screened threshold too, which is safe: a row
// of the final top k has exact >= the final exact k-th >= the screened k-th - margin, above
// every threshold (screened k-th - 2 margin, exact k-th so far - margin).
constexpr std::uint32_t exact_mark = 0x80000000u;

bool has_exact(const ScoredRow& r) { return (static_cast<std::uint32_t>(r.row) & exact_mark) != 0; }

std::int32_t row_of(const ScoredRow& r) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(r.row) & ~exact_mark);
}

}  // namespace

void ScreenedCollector::rescore_first(std::size_t count) {
    for (auto it = kept_.begin(); it != kept_.begin() + static_cast<std::ptrdiff_t>(count); ++it) {
        if (has_exact(*it)) continue;
        it->sim = scorer_->exact(query_, it->row);
        it->row = static_cast<std::int32_t>(static_cast<std::uint32_t>(it->row) | exact_mark);
    }
}

// Raises the threshold to float_at_most(e - margin), where e is the exact k-th best of the first
// `count` (>= k) kept offers, all re-scored: k rows have exact >= e, so the final k-th is >= e and
// a row of the final top k has screened >= e - margin.
void ScreenedCollector::raise_floor_to_kth_of_first(std::size_t count) {
    const auto before = [](const ScoredRow& a, const ScoredRow& b) {
        return a.sim > b.sim || (a.sim == b.sim && row_of(a) < row_of(b));  // the merge rule
    };
    const auto kth = kept_.begin() + static_cast<std::ptrdiff_t>(k_ - 1);
    std::nth_element(kept_.begin(), kth, kept_.begin() + static_cast<std::ptrdiff_t>(count), before);
    floor_ = std::max(floor_, float_at_most(static_cast<double>(kth->sim) - spread_ / 2));
    threshold_ = std::max(threshold_, floor_);
}

// First the best k + 16 offers by their similarity so far are re-scored and the threshold raised
// by their exact k-th, which drops most offers without re-scoring them; when that leaves more than
// half the room, every offer is re-scored and only the exact top k kept.
void ScreenedCollector::keep_exact_best() {
    const std::size_t first = std::min(kept_.size(), k_ + 16);
    if (first < k_) return;
    std::nth_element(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(first - 1), kept_.end(),
                     [](const ScoredRow& a, const ScoredRow& b) { return a.sim > b.sim; });
    rescore_first(first);
    raise_floor_to_kth_of_first(first);
    prune(false);
    if (kept_.size() <= prune_at_ / 2) return;
    rescore_first(kept_.size());
    raise_floor_to_kth_of_first(kept_.size());
    kept_.resize(k_);  // the exact top k, first after raise_floor_to_kth_of_first's partition
}

std::vector<ScoredRow>& ScreenedCollector::finish() {
    const std::size_t n_best = heap_.sort_best_first();
    if (n_best == k_) refresh_threshold(storage_[k_ - 1].sim);
    prune(false);
    for (ScoredRow& r : kept_) r.row = row_of(r);
    return kept_;
}

}  // namespace novelty
