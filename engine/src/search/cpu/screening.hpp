// Exact top k from screened similarities: the tiles' products (sgemm on float32 rows, or bf16 or
// int8 products on the narrow indexes) only choose candidates, and the reported similarities are
// exact_dot's. A bound on how far a screened product can be from exact_dot, and a collector that
// keeps every row the bound cannot rule out of the top k, make the chosen rows exactly the
// exact_dot top k, ties included, whatever the tiles' rounding. Internal to the CPU backend;
// docs/search.md ("Exact similarities from screened products") states the argument.
#pragma once

#include "novelty/search/search.hpp"
#include "search/cpu/topk_heap.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

/// What the screened products were computed from.
enum class ScreenOperands {
    f32,   ///< the float32 query and rows (sgemm)
    bf16,  ///< the rows (and perhaps the query) rounded to bf16 (the bf16 index)
    int8,  ///< the query and the rows quantized to int8, each vector with its own scale (the int8 index)
};

/// The quantities of one vector x (in double) that bound its screening error, with x' the vector
/// the products use: |x|, |x'| and |x - x'|, where x' = bf16(x) for bf16, x' = scale q for int8
/// (q the int8 values, quantize_int8_values), x' = x for f32; and the float32 roundings of a
/// screened product beyond those of its sum (int8: 3, for scale x scale, the fma, and the
/// dequantized operands of the sgemm path; else 0). As maxima over rows (max_screen_norms), each
/// field is its largest value over the rows. A vector holding a value that is not finite has
/// infinite norms.
struct ScreenNorms {
    double norm = 0;      ///< |x|
    double rounded = 0;   ///< |x'|
    double residual = 0;  ///< |x - x'|
    std::size_t extra_roundings = 0;
};

ScreenNorms screen_norms(const float* x, std::size_t dim, ScreenOperands operands);
/// The int8 screen_norms of x from its quantization (q, scale) by quantize_int8_values, for a
/// caller that has quantized it already (a negative scale: infinite norms).
ScreenNorms int8_screen_norms(const float* x, const std::int8_t* q, float scale, std::size_t dim);
/// Field by field, the larger of a and b.
ScreenNorms max_of(const ScreenNorms& a, const ScreenNorms& b);
/// The maxima over the rows (f32 or f16) of their screen_norms, on `threads` threads (0 = all).
ScreenNorms max_screen_norms(const VectorView& rows, ScreenOperands operands, std::size_t threads);

/// An upper bound on |exact - screened| for one query q against any row c, both of `dim` values,
/// where exact = exact_dot(q, c) and screened is a float32 sum, in any order and with or without
/// fused multiply-adds, of the products
///   f32:  q_i c_i;
///   bf16: bf16(q_i) bf16(c_i) (exact in float32) or q_i bf16(c_i), with subnormal inputs and
///         sums possibly flushed to zero (vdpbf16ps);
///   int8: q'_i c'_i, the dequantized values (x' = scale q), either as the exact integer sum of
///         q_i c_i times the float32 product of the two scales (vpdpbusd, then one fma) or as
///         float32 products of the values rounded to float32 (the sgemm path).
/// `query` holds q's norms, `rows` the maxima over the corpus. With g(m) = m 2^-24 / (1 - m 2^-24),
/// |x|+ = max(|x|, |x'|), e = the larger extra_roundings and Cauchy-Schwarz throughout
/// (docs/search.md), the margin is the sum of
///   |q|+ max|c' - c| + max|c| |q' - q|    (rounding, as q'.c' - q.c = q'.(c' - c) + c.(q' - q);
///                                          0 for f32)
///   g(dim + e) |q|+ max|c'|               (the screened sum and its extra roundings)
///   g(dim + 1) |q| max|c|                 (exact_dot's sum)
///   dim 2^-124 (|q|+ + max|c|+ + 1)       (flushed or underflowing subnormals),
/// enlarged by 2^-20 of itself for the rounding of this computation. +inf when dim is too large
/// for the bound (never in practice) or a norm is not finite.
double screen_margin(std::size_t dim, const ScreenNorms& query, const ScreenNorms& rows);

/// The largest float <= value (value a double).
float float_at_most(double value);

/// The exact similarity (exact_dot, as the final re-score computes it) of a query with a corpus
/// row, for a collector that bounds its memory (ScreenedCollector::bound_memory).
class ExactScorer {
public:
    virtual float exact(std::int64_t query, std::int64_t row) const = 0;

protected:
    ~ExactScorer() = default;
};

/// Candidates for one query's exact top k from screened similarities: every offer that can still
/// be within `spread` (2 x the screen margin) of the k-th best screened similarity is kept. A row
/// of the exact top k (ties included) has screened >= A_k - 2M, where A_k is the k-th best
/// screened similarity: k rows have exact >= A_k - M, so the k-th exact is >= A_k - M, and the
/// row's screened >= its exact - M. The running k-th best only rises, so offers it rules out
/// early stay ruled out.
class ScreenedCollector {
public:
    /// `storage`: room for 2k entries (the running top k's reservoir), k >= 1; `spread`: twice
    /// the screen_margin of this query.
    ScreenedCollector(ScoredRow* storage, std::size_t k, double spread);

    /// Screened similarity below which an offer cannot be a candidate (-inf until k were kept).
    float threshold() const { return threshold_; }
    void push(float sim, std::int64_t row);

    /// The candidates (screened similarities; any order) by the final k-th best. The collector
    /// is spent afterwards.
    std::vector<ScoredRow>& finish();

    /// Keeps at most 2k + 32 offers (reserved at the first push, never more): when pruning by
    /// the screened threshold leaves more than half of that, the offers are re-scored by
    /// `scorer` (query `query`, which must outlive the collector) and only the exact top k of
    /// them is kept (k rows rank before every other, and the final top k can only improve),
    /// and the threshold rises to float_at_most(exact k-th - spread / 2): a row of the final
    /// top k has exact >= that k-th, so screened >= it - margin. Without it (searches, whose
    /// collectors live one query block at a time) the room doubles instead.
    void bound_memory(const ExactScorer* scorer, std::int64_t query);

private:
    void refresh_threshold(float kth_best);
    void prune(bool may_compact);
    void keep_exact_best();
    void rescore_first(std::size_t count);
    void raise_floor_to_kth_of_first(std::size_t count);

    TopKCollector heap_;
    ScoredRow* storage_;
    std::size_t k_;
    double spread_;
    float threshold_;
    std::vector<ScoredRow> kept_;
    std::size_t prune_at_;
    float floor_;                           ///< the exact compaction's threshold (-inf before one)
    const ExactScorer* scorer_ = nullptr;   ///< set by bound_memory
    std::int64_t query_ = -1;
};

}  // namespace novelty
