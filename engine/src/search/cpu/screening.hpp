// Exact top k from screened similarities: the tiles' products (sgemm on float32 rows, or bf16
// products on the bf16 index) only choose candidates, and the reported similarities are
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
};

/// An upper bound on |exact - screened| for one query of norm `query_norm` against any row of
/// norm <= `max_row_norm`, both of `dim` values, where exact = exact_dot(q, c) and screened is
/// a float32 sum, in any order and with or without fused multiply-adds, of the products
///   f32:  q_i c_i;
///   bf16: bf16(q_i) bf16(c_i) (exact in float32) or q_i bf16(c_i), with subnormal inputs and
///         sums possibly flushed to zero (vdpbf16ps).
/// With u = 2^-8 for bf16 (0 for f32) and g(m) = m 2^-24 / (1 - m 2^-24), by Cauchy-Schwarz
/// (sum |q_i c_i| <= |q| |c|): |q| |c| (2u + u^2 + g(dim) (1 + u)^2 + g(dim + 1))
/// + dim 2^-124 (|q| + |c| + 1), enlarged by 2^-20 of itself for the rounding of this
/// computation. +inf when dim is too large for the bound (never in practice).
double screen_margin(std::size_t dim, double query_norm, double max_row_norm, ScreenOperands operands);

/// The largest L2 norm of the rows (f32 or f16), in double, on `threads` threads (0 = all).
double max_row_norm(const VectorView& rows, std::size_t threads);
/// The L2 norm of x (dim floats), in double.
double norm_of(const float* x, std::size_t dim);

/// The largest float <= value (value a double).
float float_at_most(double value);

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

private:
    void refresh_threshold(float kth_best);
    void prune();

    TopKCollector heap_;
    ScoredRow* storage_;
    std::size_t k_;
    double spread_;
    float threshold_;
    std::vector<ScoredRow> kept_;
    std::size_t prune_at_;
};

}  // namespace novelty
