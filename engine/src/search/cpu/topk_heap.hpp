// Bounded top-k collection: keeps the k best (similarity, row) pairs offered, where better means
// higher similarity, and for equal similarity the lower row. Shared by the CPU backend and the
// merge step of the CUDA backend.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace novelty {

/// 8 bytes: corpora are limited to 2^31 - 1 rows (SearchIndex checks).
struct ScoredRow {
    float sim;
    std::int32_t row;
};

/// True when a ranks before b: higher similarity, then lower row.
inline bool ranks_before(const ScoredRow& a, const ScoredRow& b) {
    return a.sim > b.sim || (a.sim == b.sim && a.row < b.row);
}

/// The output rule of every top-k list (best_of, the CPU search, the exact re-score): the first
/// `count` of `sorted` (already best first, count <= k) to rows / sims, slots [count, k) padded
/// with row -1 and similarity -inf.
inline void write_padded(const ScoredRow* sorted, std::size_t count, std::size_t k, std::int64_t* rows, float* sims) {
    for (std::size_t r = 0; r < k; ++r) {
        rows[r] = r < count ? sorted[r].row : -1;
        sims[r] = r < count ? sorted[r].sim : -std::numeric_limits<float>::infinity();
    }
}

/// A reservoir over caller-owned storage of 2k slots: offered pairs at or above the threshold are
/// appended; when the reservoir is full it keeps the k best (nth_element) and raises the
/// threshold to the k-th best similarity. Each offer costs O(1) amortised, against O(log k) for
/// a heap, which matters because the first rows of a scan all enter.
/// The result is exact for any order of offers: a pair equal to the threshold is still appended
/// and the tie is settled by row at the next compaction.
class TopKCollector {
public:
    /// `storage` must have room for 2 * k entries (k >= 1).
    TopKCollector(ScoredRow* storage, std::size_t k) : slots_(storage), k_(k) {}

    /// Similarity below which an offer cannot enter: -inf until k pairs have been kept once.
    float threshold() const { return threshold_; }

    void push(float sim, std::int64_t row) {
        if (sim < threshold_) return;
        slots_[size_++] = ScoredRow{sim, static_cast<std::int32_t>(row)};
        if (size_ == 2 * k_) compact();
    }

    /// Sorts the k best best-first into the first slots of the storage and returns how many there
    /// are (fewer than k when fewer were offered). The collector is spent afterwards.
    std::size_t sort_best_first() {
        if (size_ > k_) {
            std::nth_element(slots_, slots_ + k_, slots_ + size_, ranks_before);
            size_ = k_;
        }
        std::sort(slots_, slots_ + size_, ranks_before);
        return size_;
    }

    /// sort_best_first(), then the k best to rows / sims (k slots each) by write_padded. Returns
    /// how many are real. The collector is spent afterwards.
    std::size_t write_best_first(std::int64_t* rows, float* sims) {
        const std::size_t count = sort_best_first();
        write_padded(slots_, count, k_, rows, sims);
        return count;
    }

private:
    void compact() {
        std::nth_element(slots_, slots_ + (k_ - 1), slots_ + size_, ranks_before);
        threshold_ = slots_[k_ - 1].sim;
        size_ = k_;
    }

    ScoredRow* slots_;
    std::size_t k_;
    std::size_t size_ = 0;
    float threshold_ = -std::numeric_limits<float>::infinity();
};

}  // namespace novelty
