#include "novelty/claimnov/claim_index.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <unordered_set>

namespace novelty {

namespace {

bool excluded_row(std::size_t row, const std::vector<std::int64_t>& excluded) {
    return std::find(excluded.begin(), excluded.end(), static_cast<std::int64_t>(row)) != excluded.end();
}

/// True when `row` is visible: below the limit, not excluded, and in the pool when one is given.
bool visible_row(std::size_t row, std::size_t row_limit, const std::vector<std::int64_t>& excluded,
                 const std::vector<std::size_t>* pool_rows) {
    if (row >= row_limit || excluded_row(row, excluded)) return false;
    return pool_rows == nullptr || std::binary_search(pool_rows->begin(), pool_rows->end(), row);
}

}  // namespace

ClaimIndex::ClaimIndex(std::vector<IndexedClaim> claims, std::vector<float> vectors, std::size_t dim)
    : claims_(std::move(claims)), vectors_(std::move(vectors)), dim_(dim) {
    if (vectors_.size() != claims_.size() * dim_)
        throw UsageError("claim index: " + std::to_string(claims_.size()) + " claims need " +
                         std::to_string(claims_.size() * dim_) + " vector values, got " + std::to_string(vectors_.size()));
    if (dim_ == 0 && !claims_.empty()) throw UsageError("claim index: dimension 0");
    for (std::size_t i = 0; i < claims_.size(); ++i)
        by_dimension_[static_cast<std::size_t>(claims_[i].dimension)].push_back(i);
}

std::size_t ClaimIndex::papers_with_claims(ClaimDimension dimension, std::size_t row_limit,
                                           const std::vector<std::int64_t>& excluded,
                                           const std::vector<std::size_t>* pool_rows) const {
    std::unordered_set<std::size_t> papers;
    for (std::size_t i : by_dimension_[static_cast<std::size_t>(dimension)]) {
        const std::size_t row = claims_[i].paper_row;
        if (visible_row(row, row_limit, excluded, pool_rows)) papers.insert(row);
    }
    return papers.size();
}

std::vector<ClaimHit> ClaimIndex::search(const float* query, ClaimDimension dimension, std::size_t k,
                                         std::size_t row_limit, const std::vector<std::int64_t>& excluded,
                                         const std::vector<std::size_t>* pool_rows) const {
    if (k == 0) return {};
    std::vector<ClaimHit> hits;
    for (std::size_t i : by_dimension_[static_cast<std::size_t>(dimension)]) {
        const std::size_t row = claims_[i].paper_row;
        if (!visible_row(row, row_limit, excluded, pool_rows)) continue;
        const float* v = vectors_.data() + i * dim_;
        double dot = 0;
        for (std::size_t d = 0; d < dim_; ++d) dot += static_cast<double>(query[d]) * v[d];
        hits.push_back({i, static_cast<float>(dot)});
    }
    std::sort(hits.begin(), hits.end(), [](const ClaimHit& a, const ClaimHit& b) {
        return a.sim != b.sim ? a.sim > b.sim : a.claim < b.claim;
    });
    std::vector<ClaimHit> out;
    std::unordered_set<std::size_t> seen_papers;
    for (const ClaimHit& hit : hits) {
        if (out.size() == k) break;
        if (seen_papers.insert(claims_[hit.claim].paper_row).second) out.push_back(hit);
    }
    return out;
}

}  // namespace novelty
