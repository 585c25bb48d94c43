// update_self_join: offer the new rows to every kept row's stored list, and search the new and
// the damaged rows in full. As in the CPU backend (search/exact_rescore.hpp), sgemm only
// chooses candidates and every stored similarity is exact_dot's, so the result is the one a full
// recomputation gives, bit for bit.
#include "scoring/self_join_update.hpp"

#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"
#include "search/exact_rescore.hpp"
#include "search/cpu/scan_at_least.hpp"
#include "search/cpu/screening.hpp"
#include "search/cpu/topk_heap.hpp"
#include "scoring/sorted_list.hpp"
#include "search/search_rules.hpp"
#include "util/parallel_for.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

namespace novelty {

namespace {

constexpr std::size_t query_block = 1024;
constexpr std::size_t corpus_block = 1024;

void rows_to_f32(const VectorView& view, const std::vector<std::size_t>& rows, std::size_t first, std::size_t n,
                 std::vector<float>& out) {
    out.resize(n * view.dim);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t row = rows.empty() ? first + i : rows[first + i];
        if (view.dtype == DType::f32) {
            const float* src = static_cast<const float*>(view.data) + row * view.dim;
            std::copy(src, src + view.dim, out.begin() + static_cast<std::ptrdiff_t>(i * view.dim));
        } else {
            const auto* src = static_cast<const std::uint16_t*>(view.data) + row * view.dim;
            for (std::size_t d = 0; d < view.dim; ++d) out[i * view.dim + d] = half_to_float(src[d]);
        }
    }
}

// Kept rows get their old lists in new numbering; returns which kept rows lost a neighbour.
std::vector<char> carry_old_lists(const SelfJoin& old, const std::vector<std::int64_t>& old_row_of_new, SelfJoin& join) {
    const std::size_t k = old.k_stored;
    std::vector<std::int64_t> new_of_old(old.n_rows, -1);
    for (std::size_t r = 0; r < old_row_of_new.size(); ++r)
        if (old_row_of_new[r] >= 0) new_of_old[static_cast<std::size_t>(old_row_of_new[r])] = static_cast<std::int64_t>(r);
    std::vector<char> dirty(join.n_rows, 0);
    for (std::size_t r = 0; r < join.n_rows; ++r) {
        if (old_row_of_new[r] < 0) continue;
        const auto o = static_cast<std::size_t>(old_row_of_new[r]);
        for (std::size_t i = 0; i < k; ++i) {
            const std::int64_t n = old.rows[o * k + i];
            if (n < 0) break;
            const std::int64_t mapped = new_of_old[static_cast<std::size_t>(n)];
            if (mapped < 0) {
                dirty[r] = 1;  // a stored neighbour is gone: what came after the list is unknown
                break;
            }
            join.rows[r * k + i] = mapped;
            join.sims[r * k + i] = old.sims[o * k + i];
        }
    }
    return dirty;
}

// True when old row r is new row r for every old row (papers appended, none removed).
bool only_appended(const SelfJoin& old, const std::vector<std::int64_t>& old_row_of_new) {
    if (old_row_of_new.size() < old.n_rows) return false;
    for (std::size_t r = 0; r < old.n_rows; ++r)
        if (old_row_of_new[r] != static_cast<std::int64_t>(r)) return false;
    return true;
}

// The kept rows' lists in `join` (n_rows x k, -1 / -inf for the rest); returns the dirty rows.
// Appended rows only: old's lists are extended in place (nothing is lost, nothing is dirty).
std::vector<char> carry_or_extend(SelfJoin& old, const std::vector<std::int64_t>& old_row_of_new, SelfJoin& join) {
    const std::size_t k = old.k_stored, n_rows = join.n_rows;
    if (only_appended(old, old_row_of_new)) {
        join.rows = std::move(old.rows);
        join.sims = std::move(old.sims);
        join.rows.resize(n_rows * k, -1);
        join.sims.resize(n_rows * k, -std::numeric_limits<float>::infinity());
        return std::vector<char>(n_rows, 0);
    }
    join.rows.assign(n_rows * k, -1);
    join.sims.assign(n_rows * k, -std::numeric_limits<float>::infinity());
    return carry_old_lists(old, old_row_of_new, join);
}

/// The rows searched in full (`queries`) against every row, in query x corpus block pairs:
/// each query's collector gets every other row; each clean kept row's sorted list in `join`
/// gets every new query row (marking it in `entered` when one enters).
std::vector<ScreenedCollector> search_pass(const VectorView& vectors, const std::vector<std::size_t>& queries,
                                       const std::vector<char>& is_new, const std::vector<char>& dirty,
                                       std::size_t threads, std::vector<ScoredRow>& storage, SelfJoin& join,
                                       std::vector<char>& entered) {
    const std::size_t n_rows = join.n_rows, k = join.k_stored;
    // Each query keeps the candidates screen_margin cannot rule out, re-scored exactly at the end.
    const ScreenNorms rows = max_screen_norms(vectors, ScreenOperands::f32, threads);
    std::vector<ScreenedCollector> collectors;
    collectors.reserve(queries.size());
    std::vector<float> buffer;
    for (std::size_t i = 0; i < queries.size(); ++i) {
        const float* query = row_as_f32(vectors, queries[i], buffer);
        const double margin = screen_margin(vectors.dim, screen_norms(query, vectors.dim, ScreenOperands::f32), rows);
        collectors.emplace_back(storage.data() + i * 2 * k, k, 2 * margin);
    }
    // How far below a stored list's k-th similarity an sgemm product may lie and still be checked
    // exactly: screen_margin bounds |sgemm - exact_dot| for any two rows.
    const auto slack = static_cast<float>(std::nextafter(
        static_cast<float>(screen_margin(vectors.dim, rows, rows)), 1.0f));
    const std::size_t n_qblocks = (queries.size() + query_block - 1) / query_block;
    const std::size_t n_cblocks = (n_rows + corpus_block - 1) / corpus_block;
    std::vector<std::mutex> query_locks(n_qblocks), corpus_locks(n_cblocks);
    openblas_set_num_threads(1);
    parallel_for_blocks(n_qblocks * n_cblocks, threads, [&](std::size_t p) {
        thread_local std::vector<float> left, right, sims, thresholds, row_buffer, query_buffer;
        thread_local std::vector<std::uint32_t> above;
        // Diagonal order: block pairs taken at the same time differ in both blocks, so threads
        // rarely wait on each other's query or corpus lock.
        const std::size_t qb = p % n_qblocks, cb = (p / n_qblocks + qb) % n_cblocks;
        const std::size_t q0 = qb * query_block, n_q = std::min(query_block, queries.size() - q0);
        const std::size_t c0 = cb * corpus_block, n_c = std::min(corpus_block, n_rows - c0);
        rows_to_f32(vectors, queries, q0, n_q, left);
        rows_to_f32(vectors, {}, c0, n_c, right);
        sims.resize(n_q * n_c);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n_q), static_cast<int>(n_c),
                    static_cast<int>(vectors.dim), 1.0f, left.data(), static_cast<int>(vectors.dim), right.data(),
                    static_cast<int>(vectors.dim), 0.0f, sims.data(), static_cast<int>(n_c));
        above.resize(n_c);
        {
            std::lock_guard<std::mutex> lock(query_locks[qb]);
            for (std::size_t i = 0; i < n_q; ++i) {
                ScreenedCollector& c = collectors[q0 + i];
                const std::size_t n_above = scan_at_least(sims.data() + i * n_c, n_c, c.threshold(), above.data());
                for (std::size_t a = 0; a < n_above; ++a) {
                    const std::size_t j = above[a];
                    if (c0 + j != queries[q0 + i]) c.push(sims[i * n_c + j], static_cast<std::int64_t>(c0 + j));
                }
            }
        }
        // The same products seen from the corpus side: each new row offered to the clean kept
        // rows, against one threshold per row (their k-th stored similarity; +inf for the rows
        // searched in full), so that only the entries that may enter are looked at.
        std::lock_guard<std::mutex> lock(corpus_locks[cb]);
        thresholds.resize(n_c);
        for (std::size_t j = 0; j < n_c; ++j) {
            const std::size_t row = c0 + j;
            thresholds[j] = is_new[row] || dirty[row] ? std::numeric_limits<float>::infinity()
                                                      : join.sims[row * k + k - 1] - slack;
        }
        for (std::size_t i = 0; i < n_q; ++i) {
            const std::size_t query = queries[q0 + i];
            if (!is_new[query]) continue;
            const float* row_sims = sims.data() + i * n_c;
            const std::size_t n_above = scan_at_least_each(row_sims, thresholds.data(), n_c, above.data());
            for (std::size_t a = 0; a < n_above; ++a) {
                const std::size_t j = above[a], row = c0 + j;
                const float exact = exact_dot(row_as_f32(vectors, row, row_buffer), row_as_f32(vectors, query, query_buffer),
                                              vectors.dim);
                if (insert_sorted(&join.rows[row * k], &join.sims[row * k], k, exact, static_cast<std::int64_t>(query))) {
                    entered[row] = 1;
                    thresholds[j] = join.sims[row * k + k - 1] - slack;
                }
            }
        }
    });
    return collectors;
}

}  // namespace

SelfJoin update_self_join(SelfJoin old, const std::vector<std::int64_t>& old_row_of_new, const VectorView& vectors,
                          std::size_t threads, SelfJoinUpdateStats* stats) {
    const std::size_t n_rows = old_row_of_new.size();
    const std::size_t k = old.k_stored;
    if (vectors.n_rows != n_rows) throw UsageError("update_self_join: the map covers " + std::to_string(n_rows) +
                                                   " rows but the vectors have " + std::to_string(vectors.n_rows));
    if (old.rows.size() != old.n_rows * k || k == 0) throw UsageError("update_self_join: the old join is incomplete");
    for (const auto o : old_row_of_new)
        if (o >= static_cast<std::int64_t>(old.n_rows)) throw UsageError("update_self_join: an old row is out of range");
    SelfJoin join;
    join.n_rows = n_rows;
    join.q = old.q;
    join.k_stored = k;
    join.computed_by = old.computed_by;
    const std::vector<char> dirty = carry_or_extend(old, old_row_of_new, join);

    // Queries: the new rows and the dirty ones, searched against every row.
    std::vector<std::size_t> queries;
    std::vector<char> is_new(n_rows, 0);
    SelfJoinUpdateStats local;
    for (std::size_t r = 0; r < n_rows; ++r) {
        if (old_row_of_new[r] < 0) { is_new[r] = 1; ++local.new_rows; queries.push_back(r); }
        else if (dirty[r]) { ++local.dirty_rows; queries.push_back(r); }
    }
    std::vector<ScoredRow> storage(queries.size() * 2 * k);
    std::vector<char> entered(n_rows, 0);
    std::vector<ScreenedCollector> collectors =
        search_pass(vectors, queries, is_new, dirty, threads, storage, join, entered);
    std::vector<float> buffer;
    for (std::size_t i = 0; i < queries.size(); ++i) {
        std::vector<ScoredRow>& kept = collectors[i].finish();
        rescore_best(row_as_f32(vectors, queries[i], buffer), vectors, kept.data(), kept.size(), k,
                     &join.rows[queries[i] * k], &join.sims[queries[i] * k]);
    }
    std::vector<std::size_t> counts(n_rows, 0);
    for (std::size_t r = 0; r < n_rows; ++r) {
        while (counts[r] < k && join.rows[r * k + counts[r]] >= 0) ++counts[r];
        local.entered_rows += entered[r] ? 1 : 0;
    }
    fill_densities(join, counts);
    if (stats) *stats = local;
    return join;
}

}  // namespace novelty
