// The neighbours' densities a batch of ideas needs: on demand from the density store (one
// batched search for the lists it lacks), or from full self-joins of each prefix (the reference
// path). docs/scoring.md, "Exact under cutoffs and exclusions".
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/util/error.hpp"
#include "search/search_rules.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace novelty {

namespace {

constexpr std::size_t max_cached_joins = 4;

std::vector<std::int64_t> sorted_rows(const RowLists& lists, std::size_t item) {
    if (lists.n_items() == 0) return {};
    std::vector<std::int64_t> rows(lists.begin(item), lists.begin(item) + lists.size(item));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

bool contains(const std::vector<std::int64_t>& sorted, std::int64_t row) {
    return std::binary_search(sorted.begin(), sorted.end(), row);
}

UsageError unreachable(std::size_t q, std::size_t found) {
    return UsageError("q = " + std::to_string(q) + " is more than the " + std::to_string(found) +
                      " papers a neighbour can reach within the cutoff and exclusions");
}

std::string joined(const std::set<std::string>& labels) {
    std::string out;
    for (const std::string& label : labels) out += (out.empty() ? "" : ",") + label;
    return out;
}

/// The batched search's queries: corpus rows, each with its own row limit and exclusions.
struct DensityQueries {
    std::vector<std::size_t> rows, limits;
    std::vector<std::vector<std::int64_t>> excluded;  ///< sorted, the row itself included
    std::size_t add(std::size_t row, std::size_t limit, std::vector<std::int64_t> left_out) {
        left_out.insert(std::upper_bound(left_out.begin(), left_out.end(), static_cast<std::int64_t>(row)),
                        static_cast<std::int64_t>(row));
        rows.push_back(row);
        limits.push_back(limit);
        excluded.push_back(std::move(left_out));
        return rows.size() - 1;
    }
};

/// Queries per search call of the batch: progress (and an interrupt) between calls, while each
/// call stays large enough for a device's fixed cost per call not to matter.
constexpr std::size_t density_chunk = 4096;

/// Searches the queries' rows (as unit vectors, exactly as stored: the similarities are the
/// ones a self-join of the prefix reports) for their k nearest within their limits, in order of
/// limit so that each block of queries spans rows it needs, density_chunk queries per call, with
/// progress (queries done, total) before the first call and after each.
TopK search_rows(const Corpus& corpus, SearchIndex& index, const DensityQueries& dq, std::size_t k,
                 std::vector<std::size_t>& order, const ProgressFn& progress) {
    const std::size_t n = dq.rows.size(), dim = corpus.manifest().dim;
    order.resize(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return dq.limits[a] < dq.limits[b]; });
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
    return all;
}

}  // namespace

const SelfJoin& Scorer::join_for(std::size_t n_rows) {
    for (const auto& [rows, join] : joins_)
        if (rows == n_rows) return join;
    const std::size_t k_stored = std::min(options_.q + options_.extra, n_rows - 1);
    if (joins_.size() == max_cached_joins) joins_.erase(joins_.begin());
    // A corpus that cannot be written to (shared, read-only) is still scored; the densities are
    // then only kept in memory.
    const CacheWarning warn = options_.on_cache_warning ? options_.on_cache_warning : [](const std::string&) {};
    if (!options_.write_cache) {
        SelfJoin join;
        if (!read_self_join(self_join_cache_path(corpus_, n_rows, options_.q, k_stored),
                            corpus_.manifest().vectors_sha256, n_rows, options_.q, k_stored, join))
            join = index_.self_join(n_rows, options_.q, k_stored, options_.on_density_progress);
        joins_.emplace_back(n_rows, std::move(join));
        return joins_.back().second;
    }
    joins_.emplace_back(n_rows, cached_self_join(corpus_, index_, n_rows, options_.q, k_stored,
                                                 options_.on_density_progress, nullptr, warn));
    return joins_.back().second;
}

std::vector<float> Scorer::density_sims(std::size_t row, std::size_t n_rows, const std::vector<std::int64_t>& excluded) {
    // Others needed: q, or q - 1 when the row itself counts as its nearest neighbour (distance 0).
    const std::size_t need = options_.include_self ? options_.q - 1 : options_.q;
    std::vector<float> sims;
    if (need == 0) return sims;
    const SelfJoin& join = join_for(n_rows);
    for (std::size_t r = 0; r < join.k_stored && sims.size() < need; ++r) {
        const std::int64_t other = join.rows[row * join.k_stored + r];
        if (other < 0) break;
        if (contains(excluded, other)) continue;
        sims.push_back(join.sims[row * join.k_stored + r]);
    }
    if (sims.size() < need) {
        // Too many of the cached neighbours are excluded: search this row's neighbours directly,
        // the row as stored (unit_norm), so that its similarities are the join's.
        std::vector<float> v(corpus_.manifest().dim);
        corpus_.vectors().row_as_f32(row, v.data());
        SearchQueries query;
        query.vectors = v.data();
        query.n_queries = 1;
        query.dim = v.size();
        query.unit_norm = true;
        query.scope.row_limit = {n_rows};
        std::vector<std::int64_t> left_out = excluded;
        left_out.push_back(static_cast<std::int64_t>(row));
        query.scope.excluded.add(left_out);
        const TopK top = index_.search(query, need);
        if (top.count[0] < need) throw unreachable(options_.q, top.count[0]);
        sims.assign(top.sims.begin(), top.sims.begin() + static_cast<std::ptrdiff_t>(need));
    }
    return sims;
}

Scorer::NeighbourSims Scorer::densities_from_joins(const ScoreInput& input, const TopK& top,
                                                   const std::vector<IdeaScore>& scores) {
    const std::size_t p = options_.p;
    const bool needed = (options_.include_self ? options_.q - 1 : options_.q) > 0;
    NeighbourSims out;
    out.sims.resize(scores.size() * p);
    out.labels.resize(scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) {
        const std::vector<std::int64_t> excluded = sorted_rows(input.excluded, i);
        for (std::size_t r = 0; r < p; ++r)
            out.sims[i * p + r] = density_sims(static_cast<std::size_t>(top.row(i, r)), scores[i].searchable, excluded);
        if (needed) out.labels[i] = join_for(scores[i].searchable).computed_by;
    }
    return out;
}

namespace {

/// A neighbour whose density no stored list serves: idea `idea`'s neighbour `row` at its cutoff.
struct PendingDensity {
    std::size_t slot, idea, row, limit;
};

/// What the batched search found for the pending neighbours.
struct ComputedDensities {
    std::map<std::size_t, DensityLists> lists;  ///< by k: the lists to store
    /// (row, limit) -> (k of its list, its place among lists[k])
    std::map<std::pair<std::size_t, std::size_t>, std::pair<std::size_t, std::size_t>> list_of;
    std::vector<std::size_t> x_query;  ///< per pending neighbour: its search with the idea's exclusions, or npos
    TopK found;
    std::vector<std::size_t> position;  ///< query -> its place in `found`
};

/// Neighbours a list at one prefix must keep so that an idea's exclusions (`excluded_below` of
/// them in the prefix) still leave q: k, doubled until it is enough (a few sizes, so the store
/// keeps few kinds of segment); 0 when even max_k is not.
std::size_t list_size_for(std::size_t k, std::size_t q, std::size_t excluded_below) {
    std::size_t size = k;
    while (size < q + excluded_below && size < SearchIndex::max_k) size = std::min(2 * size, SearchIndex::max_k);
    return size >= q + excluded_below ? size : 0;
}

/// One search for every pending neighbour: for each (row, limit) a list long enough for every
/// idea that needs it (stored for later runs), and for a neighbour whose idea excludes more
/// rows than a list of max_k can spare, a search with those exclusions (not stored).
ComputedDensities search_pending(const Corpus& corpus, SearchIndex& index, const ScoreOptions& options, std::size_t k,
                                 const std::vector<PendingDensity>& pending,
                                 const std::vector<std::vector<std::int64_t>>& excluded) {
    ComputedDensities c;
    c.x_query.assign(pending.size(), static_cast<std::size_t>(-1));
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> size_of;  // (row, limit) -> list size
    for (std::size_t e = 0; e < pending.size(); ++e) {
        const PendingDensity& d = pending[e];
        const std::vector<std::int64_t>& x = excluded[d.idea];
        const auto below = static_cast<std::size_t>(
            std::lower_bound(x.begin(), x.end(), static_cast<std::int64_t>(d.limit)) - x.begin());
        const std::size_t size = list_size_for(k, options.q, below);
        std::size_t& kept = size_of[{d.row, d.limit}];
        kept = std::max({kept, size, k});
    }
    DensityQueries dq;
    std::vector<std::pair<std::size_t, std::size_t>> keys;
    std::size_t k_search = k;
    for (const auto& [key, size] : size_of) {
        dq.add(key.first, key.second, {});
        keys.push_back(key);
        k_search = std::max(k_search, size);
    }
    for (std::size_t e = 0; e < pending.size(); ++e) {
        const PendingDensity& d = pending[e];
        const std::vector<std::int64_t>& x = excluded[d.idea];
        const auto below = static_cast<std::size_t>(
            std::lower_bound(x.begin(), x.end(), static_cast<std::int64_t>(d.limit)) - x.begin());
        if (list_size_for(k, options.q, below) == 0) c.x_query[e] = dq.add(d.row, d.limit, x);
    }
    std::vector<std::size_t> order;
    c.found = search_rows(corpus, index, dq, k_search, order, options.on_density_progress);
    c.position.resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) c.position[order[i]] = i;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::size_t size = size_of[keys[i]], at = c.position[i] * k_search;
        DensityLists& lists = c.lists[size];
        lists.k = size;
        c.list_of[keys[i]] = {size, lists.rows.size()};
        lists.rows.push_back(static_cast<std::uint32_t>(keys[i].first));
        lists.prefixes.push_back(static_cast<std::uint32_t>(keys[i].second));
        for (std::size_t r = 0; r < size; ++r) {  // the first `size` of k_search: the same order
            lists.neighbours.push_back(static_cast<std::int32_t>(c.found.rows[at + r]));
            lists.sims.push_back(c.found.sims[at + r]);
        }
    }
    return c;
}

}  // namespace

Scorer::NeighbourSims Scorer::densities_on_demand(const ScoreInput& input, const TopK& top,
                                                  const std::vector<IdeaScore>& scores) {
    const std::size_t p = options_.p, n = scores.size();
    const std::size_t need = options_.include_self ? options_.q - 1 : options_.q;
    const std::size_t k = std::min(options_.q + options_.extra, SearchIndex::max_k);
    NeighbourSims out;
    out.sims.resize(n * p);
    out.labels.resize(n);
    if (need == 0) return out;
    if (store_) store_->refresh();
    else store_ = std::make_unique<DensityStore>(corpus_, k, options_.write_cache, options_.on_cache_warning);
    std::vector<std::vector<std::int64_t>> excluded(n);
    std::vector<std::set<std::string>> labels(n);
    std::vector<PendingDensity> pending;
    std::string label;
    for (std::size_t i = 0; i < n; ++i) {
        excluded[i] = sorted_rows(input.excluded, i);
        const std::size_t limit = std::min(scores[i].searchable, corpus_.size());
        for (std::size_t r = 0; r < p; ++r) {
            const auto row = static_cast<std::size_t>(top.row(i, r));
            if (store_->serve(row, limit, excluded[i], need, out.sims[i * p + r], &label)) {
                labels[i].insert(label);
                ++counts_.served;
            } else {
                pending.push_back({i * p + r, i, row, limit});
            }
        }
    }
    if (!pending.empty()) {
        ComputedDensities c = search_pending(corpus_, index_, options_, k, pending, excluded);
        ++counts_.searches;
        for (const auto& [size, lists] : c.lists) {
            counts_.computed += lists.rows.size();
            store_->append(lists, index_.label());
        }
        for (std::size_t e = 0; e < pending.size(); ++e) {
            const PendingDensity& d = pending[e];
            std::vector<float>& sims = out.sims[d.slot];
            const auto [size, at] = c.list_of.at({d.row, d.limit});
            const DensityLists& lists = c.lists.at(size);
            bool done = serve_from_list(&lists.neighbours[at * size], &lists.sims[at * size], size, d.limit, d.limit,
                                        excluded[d.idea], need, sims);
            if (!done && c.x_query[e] != static_cast<std::size_t>(-1)) {
                const std::size_t found_at = c.position[c.x_query[e]], k_search = c.found.k;
                if (c.found.count[found_at] < need) throw unreachable(options_.q, c.found.count[found_at]);
                sims.assign(c.found.sims.begin() + static_cast<std::ptrdiff_t>(found_at * k_search),
                            c.found.sims.begin() + static_cast<std::ptrdiff_t>(found_at * k_search + need));
                ++counts_.searched_with_exclusions;
                done = true;
            }
            // A list of the whole prefix (it holds fewer rows than the list's size) that the
            // exclusions leave short.
            if (!done) throw unreachable(options_.q, sims.size());
            labels[d.idea].insert(index_.label());
        }
    }
    for (std::size_t i = 0; i < n; ++i) out.labels[i] = joined(labels[i]);
    return out;
}

}  // namespace novelty
