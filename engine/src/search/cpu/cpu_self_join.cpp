#include "search/cpu/cpu_self_join.hpp"

#include "search/exact_rescore.hpp"
#include "search/cpu/screening.hpp"

#include "util/parallel_for.hpp"
#include "search/cpu/scan_at_least.hpp"
#include "search/search_rules.hpp"
#include "novelty/util/half.hpp"
#include "search/cpu/topk_heap.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

namespace novelty {

namespace {

constexpr std::size_t default_block = 1024;
constexpr std::size_t scan_chunk = 256;

void rows_to_f32(const VectorView& view, std::size_t first, std::size_t n, std::vector<float>& out) {
    out.resize(n * view.dim);
    if (view.dtype == DType::f32) {
        const float* src = static_cast<const float*>(view.data) + first * view.dim;
        std::copy(src, src + n * view.dim, out.begin());
        return;
    }
    const auto* src = static_cast<const std::uint16_t*>(view.data) + first * view.dim;
    for (std::size_t i = 0; i < n * view.dim; ++i) out[i] = half_to_float(src[i]);
}

// Offers row `local` of `sims` (n_cols similarities to rows first_col..) to its collector,
// leaving out `self` (a global row, or -1).
void offer_row(const float* sims, std::size_t n_cols, std::size_t first_col, std::int64_t self,
               ScreenedCollector& collector, std::uint32_t* above) {
    for (std::size_t j0 = 0; j0 < n_cols; j0 += scan_chunk) {
        const std::size_t n_scan = std::min(scan_chunk, n_cols - j0);
        const std::size_t n_above = scan_at_least(sims + j0, n_scan, collector.threshold(), above);
        for (std::size_t a = 0; a < n_above; ++a) {
            const std::size_t j = j0 + above[a];
            const auto row = static_cast<std::int64_t>(first_col + j);
            if (row != self) collector.push(sims[j], row);
        }
    }
}

/// The join from each row's collector: its candidates re-scored exactly, the best k_stored,
/// -1 / -inf padded, and the densities over the first q.
SelfJoin join_from_collectors(const VectorView& corpus, std::vector<ScreenedCollector>& collectors, std::size_t n_rows,
                              std::size_t q, std::size_t k_stored, std::size_t threads) {
    SelfJoin join;
    join.n_rows = n_rows;
    join.q = q;
    join.k_stored = k_stored;
    join.rows.assign(n_rows * k_stored, -1);
    join.sims.assign(n_rows * k_stored, -std::numeric_limits<float>::infinity());
    std::vector<std::size_t> counts(n_rows);
    parallel_for_blocks((n_rows + 255) / 256, threads, [&](std::size_t block) {
        std::vector<float> own_buffer;
        for (std::size_t row = block * 256; row < std::min(n_rows, (block + 1) * 256); ++row) {
            std::vector<ScoredRow>& kept = collectors[row].finish();
            counts[row] = rescore_best(row_as_f32(corpus, row, own_buffer), corpus, kept.data(), kept.size(), k_stored,
                                       join.rows.data() + row * k_stored, join.sims.data() + row * k_stored);
            kept = {};
        }
    });
    fill_densities(join, counts);
    return join;
}

// exact_dot of two corpus rows, as join_from_collectors re-scores them (f16 rows widened).
class CorpusRowScorer final : public ExactScorer {
public:
    explicit CorpusRowScorer(const VectorView& corpus) : corpus_(corpus), dot_(exact_dot_for_cpu()) {}
    float exact(std::int64_t query, std::int64_t row) const override {
        thread_local std::vector<float> query_buffer, row_buffer;
        return dot_(row_as_f32(corpus_, static_cast<std::size_t>(query), query_buffer),
                         row_as_f32(corpus_, static_cast<std::size_t>(row), row_buffer), corpus_.dim);
    }

private:
    const VectorView& corpus_;
    ExactDotFn dot_;
};

// One collector per row of the prefix, each keeping the candidates screen_margin cannot rule out
// (re-scored exactly at the end), over `storage` (2 k_stored slots per row), each within 2 k_stored
// + 32 candidates by `scorer` (bound_memory): every row's collector lives until the end, so a
// margin wider than the gaps between neighbours (int8's) must not let them grow.
std::vector<ScreenedCollector> row_collectors(const VectorView& corpus, std::size_t n_rows, std::size_t k_stored,
                                              const SelfJoinProducts& products, const SearchTuning& tuning,
                                              std::vector<ScoredRow>& storage, const ExactScorer& scorer) {
    VectorView prefix = corpus;
    prefix.n_rows = n_rows;
    const ScreenNorms rows = max_screen_norms(prefix, products.operands, tuning.threads);
    std::vector<ScreenedCollector> collectors;
    collectors.reserve(n_rows);
    std::vector<float> buffer;
    for (std::size_t row = 0; row < n_rows; ++row) {
        const ScreenNorms own = screen_norms(row_as_f32(corpus, row, buffer), corpus.dim, products.operands);
        const double margin = screen_margin(corpus.dim, own, rows);
        collectors.emplace_back(storage.data() + row * 2 * k_stored, k_stored, 2 * margin);
        collectors.back().bound_memory(&scorer, static_cast<std::int64_t>(row));
    }
    return collectors;
}

}  // namespace

std::size_t symmetric_join_bytes(std::size_t n_rows, std::size_t k_stored) {
    // The reservoir (2 k_stored), the candidates a collector keeps at most (2 k_stored + 32,
    // ScreenedCollector::bound_memory) and the collector itself.
    return n_rows * ((4 * k_stored + 32) * sizeof(ScoredRow) + sizeof(ScreenedCollector));
}

SelfJoin symmetric_self_join(const VectorView& corpus, std::size_t n_rows, std::size_t q, std::size_t k_stored,
                             const SearchTuning& tuning, const ProgressFn& progress, const SelfJoinProducts& products) {
    const std::size_t dim = corpus.dim;
    std::size_t block = tuning.query_tile ? tuning.query_tile : default_block;
    block = (block + products.block_multiple - 1) / products.block_multiple * products.block_multiple;
    const std::size_t n_blocks = (n_rows + block - 1) / block;

    std::vector<ScoredRow> storage(n_rows * 2 * k_stored);
    const CorpusRowScorer scorer(corpus);
    std::vector<ScreenedCollector> collectors =
        row_collectors(corpus, n_rows, k_stored, products, tuning, storage, scorer);
    std::vector<std::mutex> block_locks(n_blocks);

    // Pairs (I, J), I <= J, ordered by distance from the diagonal so that threads working at the
    // same time mostly touch different blocks.
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    pairs.reserve(n_blocks * (n_blocks + 1) / 2);
    for (std::size_t offset = 0; offset < n_blocks; ++offset)
        for (std::size_t i = 0; i + offset < n_blocks; ++i) pairs.emplace_back(i, i + offset);

    openblas_set_num_threads(1);
    parallel_for_blocks(
        pairs.size(), tuning.threads,
        [&](std::size_t p) {
            thread_local std::vector<float> rows_i, rows_j, sims, thresholds;
            thread_local std::vector<std::uint32_t> above;
            above.resize(std::max(scan_chunk, block));
            const auto [bi, bj] = pairs[p];
            const std::size_t i0 = bi * block, n_i = std::min(block, n_rows - i0);
            const std::size_t j0 = bj * block, n_j = std::min(block, n_rows - j0);
            rows_to_f32(corpus, i0, n_i, rows_i);
            sims.resize(n_i * n_j);
            if (products.product) {
                products.product(rows_i.data(), n_i, j0, n_j, sims.data());
            } else {
                const float* right = rows_i.data();
                if (bi != bj) {
                    rows_to_f32(corpus, j0, n_j, rows_j);
                    right = rows_j.data();
                }
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n_i), static_cast<int>(n_j),
                            static_cast<int>(dim), 1.0f, rows_i.data(), static_cast<int>(dim), right,
                            static_cast<int>(dim), 0.0f, sims.data(), static_cast<int>(n_j));
            }
            {
                std::lock_guard<std::mutex> lock(block_locks[bi]);
                for (std::size_t i = 0; i < n_i; ++i)
                    offer_row(sims.data() + i * n_j, n_j, j0, bi == bj ? static_cast<std::int64_t>(i0 + i) : -1,
                              collectors[i0 + i], above.data());
            }
            if (bi == bj) return;
            // The same products seen from block J: column j of sims holds row j0 + j's
            // similarities to block I. Rows of sims are compared with every J row's threshold
            // at once, so nothing is transposed.
            std::lock_guard<std::mutex> lock(block_locks[bj]);
            thresholds.resize(n_j);
            for (std::size_t j = 0; j < n_j; ++j) thresholds[j] = collectors[j0 + j].threshold();
            for (std::size_t i = 0; i < n_i; ++i) {
                const float* row = sims.data() + i * n_j;
                const std::size_t n_above = scan_at_least_each(row, thresholds.data(), n_j, above.data());
                for (std::size_t a = 0; a < n_above; ++a) {
                    const std::size_t j = above[a];
                    ScreenedCollector& collector = collectors[j0 + j];
                    collector.push(row[j], static_cast<std::int64_t>(i0 + i));
                    thresholds[j] = collector.threshold();
                }
            }
        },
        progress);

    return join_from_collectors(corpus, collectors, n_rows, q, k_stored, tuning.threads);
}

}  // namespace novelty
