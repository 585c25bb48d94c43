// A bounded top-k collector: keeps the k best (similarity, row) pairs seen, where better means
// higher similarity, and for equal similarity the lower row. Shared by the CPU backend and the
// merge step of the CUDA backend.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace novelty {

struct ScoredRow {
    float sim;
    std::int64_t row;
};

/// True when a ranks before b: higher similarity, then lower row.
inline bool ranks_before(const ScoredRow& a, const ScoredRow& b) {
    return a.sim > b.sim || (a.sim == b.sim && a.row < b.row);
}

/// A min-heap of at most k entries over caller-owned storage (k slots), whose top is the entry
/// that ranks last. threshold() is the similarity a new row must reach to enter once full.
class TopKHeap {
public:
    TopKHeap(ScoredRow* storage, std::size_t k) : heap_(storage), k_(k) {}

    std::size_t size() const { return size_; }
    bool full() const { return size_ == k_; }
    /// Lowest similarity that can still enter: -inf until the heap is full.
    float threshold() const { return full() ? heap_[0].sim : -std::numeric_limits<float>::infinity(); }

    /// Offers a row; keeps it when the heap is not full or it ranks before the current last.
    void push(float sim, std::int64_t row) {
        const ScoredRow entry{sim, row};
        if (size_ < k_) {
            heap_[size_++] = entry;
            std::push_heap(heap_, heap_ + size_, ranks_before);
        } else if (ranks_before(entry, heap_[0])) {
            std::pop_heap(heap_, heap_ + size_, ranks_before);
            heap_[size_ - 1] = entry;
            std::push_heap(heap_, heap_ + size_, ranks_before);
        }
    }

    /// Sorts the kept entries best first (the heap is unusable afterwards) and returns how many.
    std::size_t sort_best_first() {
        std::sort_heap(heap_, heap_ + size_, ranks_before);
        return size_;
    }

private:
    ScoredRow* heap_;
    std::size_t k_;
    std::size_t size_ = 0;
};

}  // namespace novelty
