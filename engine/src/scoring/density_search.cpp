#include "scoring/density_search.hpp"

#include "search/search_rules.hpp"

#include <algorithm>
#include <limits>

namespace novelty {

namespace {

/// The batched search's queries: corpus rows, each with its own row range and exclusions.
struct DensityQueries {
    std::vector<std::size_t> rows, begins, limits;
    std::vector<std::vector<std::int64_t>> excluded;  ///< sorted, the row itself included
    std::size_t add(std::size_t row, std::size_t begin, std::size_t limit, std::vector<std::int64_t> left_out) {
        left_out.insert(std::upper_bound(left_out.begin(), left_out.end(), static_cast<std::int64_t>(row)),
                        static_cast<std::int64_t>(row));
        rows.push_back(row);
        begins.push_back(begin);
        limits.push_back(limit);
        excluded.push_back(std::move(left_out));
        return rows.size() - 1;
    }
};

/// Queries per search call of the batch: progress (and an interrupt) between calls, while each
/// call stays large enough for a device's fixed cost per call not to matter.
constexpr std::size_t density_chunk = 4096;

/// Searches the queries' rows (as unit vectors, exactly as stored: the similarities are the
/// ones a self-join of the prefix reports) for their k nearest within their ranges, in order of
/// (limit, begin) so that each block of queries spans the rows it needs, density_chunk queries
/// per call, with progress (queries done, total) before the first call and after each.
/// `position[q]`: query q's place in the result.
TopK search_rows(const Corpus& corpus, SearchIndex& index, const DensityQueries& dq, std::size_t k,
                 std::vector<std::size_t>& position, const ProgressFn& progress) {
    const std::size_t n = dq.rows.size(), dim = corpus.manifest().dim;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::make_pair(dq.limits[a], dq.begins[a]) < std::make_pair(dq.limits[b], dq.begins[b]);
    });
    TopK all = empty_top_k(n, k);
    std::vector<float> vectors;
    if (progress) progress(0, n);
    for (std::size_t first = 0; first < n; first += density_chunk) {
        const std::size_t m = std::min(density_chunk, n - first);
        vectors.resize(m * dim);
        SearchQueries queries;
        queries.n_queries = m;
        queries.dim = dim;
        queries.unit_norm = true;
        for (std::size_t i = 0; i < m; ++i) {
            const std::size_t q = order[first + i];
            corpus.vectors().row_as_f32(dq.rows[q], vectors.data() + i * dim);
            queries.scope.row_begin.push_back(dq.begins[q]);
            queries.scope.row_limit.push_back(dq.limits[q]);
            queries.scope.excluded.add(dq.excluded[q]);
        }
        queries.vectors = vectors.data();
        const TopK part = index.search(queries, k);
        std::copy(part.rows.begin(), part.rows.end(), all.rows.begin() + static_cast<std::ptrdiff_t>(first * k));
        std::copy(part.sims.begin(), part.sims.end(), all.sims.begin() + static_cast<std::ptrdiff_t>(first * k));
        std::copy(part.count.begin(), part.count.end(), all.count.begin() + static_cast<std::ptrdiff_t>(first));
        if (progress) progress(first + m, n);
    }
    position.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) position[order[i]] = i;
    return all;
}

/// A list being merged: rows and similarities, best first.
struct RunningList {
    std::vector<std::int64_t> rows;
    std::vector<float> sims;
};

/// The best k of `list` and result `at` of `found` (disjoint rows): similarity descending, ties
/// by lower row, the order every search reports.
void merge_into(RunningList& list, const TopK& found, std::size_t at, std::size_t k) {
    const std::int64_t* seg_rows = found.rows.data() + at * found.k;
    const float* seg_sims = found.sims.data() + at * found.k;
    const std::size_t n_seg = found.count[at];
    RunningList out;
    std::size_t a = 0, b = 0;
    while (out.rows.size() < k && (a < list.rows.size() || b < n_seg)) {
        const bool take_a = b == n_seg || (a < list.rows.size() &&
                                           (list.sims[a] > seg_sims[b] ||
                                            (list.sims[a] == seg_sims[b] && list.rows[a] < seg_rows[b])));
        out.rows.push_back(take_a ? list.rows[a] : seg_rows[b]);
        out.sims.push_back(take_a ? list.sims[a++] : seg_sims[b++]);
    }
    list = std::move(out);
}

/// Appends the first `size` entries of `list` (padded with -1 / -inf) as the list of (row, limit).
void keep_list(ComputedDensities& c, std::size_t size, std::size_t row, std::size_t limit, const RunningList& list) {
    DensityLists& lists = c.lists[size];
    lists.k = size;
    c.list_of[{row, limit}] = {size, lists.rows.size()};
    lists.rows.push_back(static_cast<std::uint32_t>(row));
    lists.prefixes.push_back(static_cast<std::uint32_t>(limit));
    for (std::size_t r = 0; r < size; ++r) {
        const bool real = r < list.rows.size();
        lists.neighbours.push_back(real ? static_cast<std::int32_t>(list.rows[r]) : -1);
        lists.sims.push_back(real ? list.sims[r] : -std::numeric_limits<float>::infinity());
    }
}

std::size_t excluded_below(const std::vector<std::int64_t>& excluded, std::size_t limit) {
    return static_cast<std::size_t>(std::lower_bound(excluded.begin(), excluded.end(), static_cast<std::int64_t>(limit)) -
                                    excluded.begin());
}

}  // namespace

std::size_t list_size_for(std::size_t k, std::size_t q, std::size_t excluded_below) {
    std::size_t size = k;
    while (size < q + excluded_below && size < SearchIndex::max_k) size = std::min(2 * size, SearchIndex::max_k);
    return size >= q + excluded_below ? size : 0;
}

ComputedDensities search_pending(const Corpus& corpus, SearchIndex& index, const ScoreOptions& options, std::size_t k,
                                 const std::vector<PendingDensity>& pending,
                                 const std::vector<std::vector<std::int64_t>>& excluded) {
    const std::size_t need = options.include_self ? options.q - 1 : options.q;
    // (row, limit) -> list size; ordered by row, then limit: each row's chain of segments.
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> size_of;
    for (const PendingDensity& d : pending) {
        std::size_t& kept = size_of[{d.row, d.limit}];
        kept = std::max({kept, list_size_for(k, options.q, excluded_below(excluded[d.idea], d.limit)), k});
    }
    DensityQueries dq;
    std::size_t k_search = k, previous_row = static_cast<std::size_t>(-1), begin = 0;
    for (const auto& [key, size] : size_of) {
        if (key.first != previous_row) begin = 0;
        dq.add(key.first, begin, key.second, {});
        previous_row = key.first;
        begin = key.second;
        k_search = std::max(k_search, size);
    }
    std::map<std::size_t, std::size_t> x_query;  // pending index -> its query with exclusions
    for (std::size_t e = 0; e < pending.size(); ++e) {
        const PendingDensity& d = pending[e];
        if (list_size_for(k, options.q, excluded_below(excluded[d.idea], d.limit)) == 0)
            x_query[e] = dq.add(d.row, 0, d.limit, excluded[d.idea]);
    }
    std::vector<std::size_t> position;
    const TopK found = search_rows(corpus, index, dq, k_search, position, options.on_density_progress);
    ComputedDensities c;
    c.queries = dq.rows.size();
    for (std::size_t q = 0; q < dq.rows.size(); ++q) c.row_pairs += dq.limits[q] - dq.begins[q];
    RunningList running;
    std::size_t query = 0;
    previous_row = static_cast<std::size_t>(-1);
    for (const auto& [key, size] : size_of) {
        if (key.first != previous_row) running = {};
        merge_into(running, found, position[query++], k_search);
        keep_list(c, size, key.first, key.second, running);
        previous_row = key.first;
    }
    for (const auto& [e, q] : x_query) {
        const std::size_t at = position[q], n = std::min(found.count[at], need);
        c.with_exclusions[e].assign(found.sims.begin() + static_cast<std::ptrdiff_t>(at * k_search),
                                    found.sims.begin() + static_cast<std::ptrdiff_t>(at * k_search + n));
    }
    return c;
}

}  // namespace novelty
