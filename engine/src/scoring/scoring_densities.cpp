// The neighbours' densities a batch of ideas needs: on demand from the density store (one
// batched search for the lists it lacks), or from full self-joins of each prefix (the reference
// path). docs/scoring.md, "Exact under cutoffs and exclusions".
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/util/error.hpp"
#include "scoring/density_plan.hpp"
#include "scoring/density_search.hpp"
#include "search/search_rules.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

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
    out.densities.resize(scores.size() * p);
    out.labels.resize(scores.size());
    out.paths.resize(scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) {
        const std::vector<std::int64_t> excluded = sorted_rows(input.excluded, i);
        for (std::size_t r = 0; r < p; ++r)
            out.set(i * p + r, density_sims(static_cast<std::size_t>(top.row(i, r)), scores[i].searchable, excluded),
                    *this);
        if (!needed) continue;
        out.labels[i] = join_for(scores[i].searchable).computed_by;
        out.paths[i] = "self-join";
    }
    return out;
}

/// Where the densities of one batch come from, per idea: the backends' labels and the paths
/// ("store", "self-join", "on-demand").
struct DensitySources {
    std::vector<std::set<std::string>> labels, paths;
    explicit DensitySources(std::size_t n) : labels(n), paths(n) {}
    void add(std::size_t idea, const std::string& label, const char* path) {
        labels[idea].insert(label);
        paths[idea].insert(path);
    }
};

namespace {

std::vector<MissingDensity> missing_of(const std::vector<PendingDensity>& pending) {
    std::vector<MissingDensity> missing;
    missing.reserve(pending.size());
    for (const PendingDensity& d : pending) missing.push_back({d.row, d.limit});
    return missing;
}

/// A self-join as lists for the store: every row of the prefix, at the prefix.
DensityLists lists_of(const SelfJoin& join) {
    DensityLists lists;
    lists.k = join.k_stored;
    for (std::size_t row = 0; row < join.n_rows; ++row) {
        lists.rows.push_back(static_cast<std::uint32_t>(row));
        lists.prefixes.push_back(static_cast<std::uint32_t>(join.n_rows));
    }
    lists.neighbours.assign(join.rows.begin(), join.rows.end());
    lists.sims = join.sims;
    return lists;
}

}  // namespace

void Scorer::open_store(std::size_t k) {
    if (store_) store_->refresh();
    else store_ = std::make_unique<DensityStore>(corpus_, k, options_.write_cache, options_.on_cache_warning);
}

void Scorer::join_into_store(std::size_t prefix) {
    const std::size_t k_stored = std::min(options_.q + options_.extra, prefix - 1);
    bool stored = options_.write_cache;
    const CacheWarning warn = [&](const std::string& message) {
        stored = false;
        if (options_.on_cache_warning) options_.on_cache_warning(message);
    };
    SelfJoin join;
    if (options_.write_cache)
        join = cached_self_join(corpus_, index_, prefix, options_.q, k_stored, options_.on_density_progress, nullptr, warn);
    else if (!read_self_join(self_join_cache_path(corpus_, prefix, options_.q, k_stored),
                             corpus_.manifest().vectors_sha256, prefix, options_.q, k_stored, join))
        join = index_.self_join(prefix, options_.q, k_stored, options_.on_density_progress);
    else
        stored = true;  // an earlier run's cache: the store maps it
    ++counts_.joins;
    store_->refresh();
    if (!stored) store_->append(lists_of(join), join.computed_by);  // kept in memory, or as a segment
}

Scorer::NeighbourSims Scorer::densities_on_demand(const ScoreInput& input, const TopK& top,
                                                  const std::vector<IdeaScore>& scores) {
    const std::size_t p = options_.p, n = scores.size();
    const std::size_t need = options_.include_self ? options_.q - 1 : options_.q;
    const std::size_t k = std::min(options_.q + options_.extra, SearchIndex::max_k);
    NeighbourSims out;
    out.densities.resize(n * p);
    out.labels.resize(n);
    out.paths.resize(n);
    if (need == 0) return out;
    open_store(k);
    std::vector<std::vector<std::int64_t>> excluded(n);
    DensitySources sources(n);
    std::vector<PendingDensity> pending;
    for (std::size_t i = 0; i < n; ++i) {
        excluded[i] = sorted_rows(input.excluded, i);
        const std::size_t limit = std::min(scores[i].searchable, corpus_.size());
        for (std::size_t r = 0; r < p; ++r) pending.push_back({i * p + r, i, static_cast<std::size_t>(top.row(i, r)), limit});
    }
    pending = serve_stored(pending, excluded, out, sources, "store");
    if (!pending.empty() && options_.densities == DensityMethod::by_cost) {
        const DensityPlan plan = plan_densities(missing_of(pending));
        if (options_.on_density_plan) options_.on_density_plan(plan.summary());
        for (const PlannedJoin& join : plan.joins) join_into_store(join.prefix);
        if (!plan.joins.empty()) pending = serve_stored(pending, excluded, out, sources, "self-join");
    } else if (!pending.empty() && options_.on_density_plan) {
        options_.on_density_plan("on demand (" + std::to_string(pending.size()) + " neighbours to search)");
    }
    if (!pending.empty()) search_missing(pending, excluded, k, out, sources);
    for (std::size_t i = 0; i < n; ++i) {
        out.labels[i] = joined(sources.labels[i]);
        out.paths[i] = joined(sources.paths[i]);
    }
    return out;
}

std::vector<PendingDensity> Scorer::serve_stored(const std::vector<PendingDensity>& pending,
                                                 const std::vector<std::vector<std::int64_t>>& excluded,
                                                 NeighbourSims& out, DensitySources& sources, const char* path) {
    const std::size_t need = options_.include_self ? options_.q - 1 : options_.q;
    std::vector<PendingDensity> left;
    std::string label;
    std::vector<float> sims;
    for (const PendingDensity& d : pending) {
        if (store_->serve(d.row, d.limit, excluded[d.idea], need, sims, &label)) {
            out.set(d.slot, sims, *this);
            sources.add(d.idea, label, path);
            ++counts_.served;
        } else {
            left.push_back(d);
        }
    }
    return left;
}

namespace {

/// Lists one density search computes at most: its results (lists x k x 12 bytes, and the lists
/// kept for the store) stay within a few hundred MB however many ideas a call scores.
constexpr std::size_t lists_per_search = std::size_t(1) << 16;

/// `pending` cut into runs of whole rows (a row's lists at every limit together: its segments
/// chain), each holding at most lists_per_search distinct (row, limit) lists (more only when one
/// row alone has more).
std::vector<std::vector<PendingDensity>> row_groups(std::vector<PendingDensity> pending, std::size_t& n_lists) {
    std::stable_sort(pending.begin(), pending.end(),
                     [](const PendingDensity& a, const PendingDensity& b) { return std::tie(a.row, a.limit) < std::tie(b.row, b.limit); });
    std::vector<std::vector<PendingDensity>> groups(1);
    std::size_t lists = 0;
    n_lists = 0;
    for (std::size_t e = 0; e < pending.size(); ++e) {
        const bool new_row = e == 0 || pending[e].row != pending[e - 1].row;
        const bool new_list = new_row || pending[e].limit != pending[e - 1].limit;
        if (new_row && lists >= lists_per_search) {
            groups.emplace_back();
            lists = 0;
        }
        lists += new_list ? 1 : 0;
        n_lists += new_list ? 1 : 0;
        groups.back().push_back(pending[e]);
    }
    return groups;
}

}  // namespace

void Scorer::search_missing(const std::vector<PendingDensity>& pending,
                            const std::vector<std::vector<std::int64_t>>& excluded, std::size_t k, NeighbourSims& out,
                            DensitySources& sources) {
    std::size_t n_lists = 0, done = 0;
    const std::vector<std::vector<PendingDensity>> groups = row_groups(pending, n_lists);
    ScoreOptions group_options = options_;
    for (const std::vector<PendingDensity>& group : groups) {
        // Progress over the whole call: lists done before this group, of all the lists.
        if (options_.on_density_progress)
            group_options.on_density_progress = [&, offset = done](std::size_t d, std::size_t) {
                options_.on_density_progress(std::min(offset + d, n_lists), n_lists);
            };
        done += search_group(group, excluded, k, group_options, out, sources);
    }
}

std::size_t Scorer::search_group(const std::vector<PendingDensity>& pending,
                                 const std::vector<std::vector<std::int64_t>>& excluded, std::size_t k,
                                 const ScoreOptions& options, NeighbourSims& out, DensitySources& sources) {
    const std::size_t need = options_.include_self ? options_.q - 1 : options_.q;
    const ComputedDensities c = search_pending(corpus_, index_, options, k, pending, excluded);
    ++counts_.searches;
    counts_.rows_searched += c.queries;
    counts_.row_pairs_searched += c.row_pairs;
    for (const auto& [size, lists] : c.lists) {
        counts_.computed += lists.rows.size();
        store_->append(lists, index_.label());
    }
    std::vector<float> sims;
    for (std::size_t e = 0; e < pending.size(); ++e) {
        const PendingDensity& d = pending[e];
        const auto [size, at] = c.list_of.at({d.row, d.limit});
        const DensityLists& lists = c.lists.at(size);
        bool done = serve_from_list(&lists.neighbours[at * size], &lists.sims[at * size], size, d.limit, d.limit,
                                    excluded[d.idea], need, sims);
        if (const auto x = c.with_exclusions.find(e); !done && x != c.with_exclusions.end()) {
            if (x->second.size() < need) throw unreachable(options_.q, x->second.size());
            sims = x->second;
            ++counts_.searched_with_exclusions;
            done = true;
        }
        // A list of the whole prefix (it holds fewer rows than the list's size) that the
        // exclusions leave short.
        if (!done) throw unreachable(options_.q, sims.size());
        out.set(d.slot, sims, *this);
        sources.add(d.idea, index_.label(), "on-demand");
    }
    return c.list_of.size();
}

}  // namespace novelty
