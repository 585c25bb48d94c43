// Exact retrieval of pool claims for ClaimNov: the k most similar claims of one dimension, at most
// one per paper, among the papers a proposal may see (a row prefix for its cutoff, less exclusions).
#pragma once

#include "novelty/claimnov/claimnov.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace novelty {

/// One pool claim as indexed: its paper's corpus row and its dimension.
struct IndexedClaim {
    std::size_t paper_row = 0;
    ClaimDimension dimension = ClaimDimension::methodology;
};

/// A hit: the claim (index into the pool list) and its cosine similarity.
struct ClaimHit {
    std::size_t claim = 0;
    float sim = 0;
};

/// Pool claims with their L2-normalised vectors (n_claims x dim float32, row i = claims[i]).
class ClaimIndex {
public:
    /// Throws UsageError when the vector count does not match the claims.
    ClaimIndex(std::vector<IndexedClaim> claims, std::vector<float> vectors, std::size_t dim);

    std::size_t size() const { return claims_.size(); }
    std::size_t dim() const { return dim_; }
    const IndexedClaim& claim(std::size_t i) const { return claims_[i]; }

    /// Pool papers (distinct rows < row_limit, not in `excluded`, and in `pool_rows` when it is
    /// given: a proposal's own pool, sorted ascending) with at least one claim of `dimension`: n_d
    /// of the method.
    std::size_t papers_with_claims(ClaimDimension dimension, std::size_t row_limit,
                                   const std::vector<std::int64_t>& excluded,
                                   const std::vector<std::size_t>* pool_rows = nullptr) const;

    /// The `k` most similar claims of `dimension` to `query` (dim floats, L2-normalised), keeping
    /// each paper's best claim only; papers at rows >= row_limit, in `excluded`, or (when
    /// `pool_rows` is given, sorted ascending) outside `pool_rows` are left out.
    /// By similarity descending, ties by lower claim index. Fewer than k when fewer papers qualify;
    /// empty for k = 0. Exact: a dot product with every claim of the dimension.
    std::vector<ClaimHit> search(const float* query, ClaimDimension dimension, std::size_t k, std::size_t row_limit,
                                 const std::vector<std::int64_t>& excluded,
                                 const std::vector<std::size_t>* pool_rows = nullptr) const;

private:
    std::vector<IndexedClaim> claims_;
    std::vector<float> vectors_;
    std::size_t dim_;
    std::vector<std::size_t> by_dimension_[n_claim_dimensions];  ///< claim indices per dimension
};

}  // namespace novelty
