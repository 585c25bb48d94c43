// RND, ND, HD and ON scores (docs/scoring.md).
#include "novelty/scoring/density_variants.hpp"
#include "novelty/util/error.hpp"
#include "search/index_check.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/scoring.hpp"
#include "search/search_rules.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace novelty {

namespace {

constexpr std::size_t max_cached_joins = 4;

double euclidean(float sim) { return std::sqrt(std::max(0.0, 2.0 - 2.0 * static_cast<double>(sim))); }

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

}  // namespace

std::size_t reachable_papers(std::size_t row_limit, std::size_t n_rows, const std::int64_t* excluded,
                             std::size_t n_excluded) {
    const std::size_t limit = std::min(row_limit, n_rows);
    std::vector<std::int64_t> rows(excluded, excluded + n_excluded);
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    std::size_t reachable = limit;
    for (std::int64_t row : rows)
        if (row >= 0 && static_cast<std::size_t>(row) < limit) --reachable;
    return reachable;
}

std::string reach_problem(std::size_t p, std::size_t q, std::size_t reachable, const std::string& cutoff) {
    const std::size_t k = std::max(p, q);
    if (reachable > k) return "";
    return "p = " + std::to_string(p) + " and q = " + std::to_string(q) + " need more than " + std::to_string(k) +
           " papers, but " + (cutoff.empty() ? std::string("the corpus") : "the corpus up to " + cutoff) +
           " less its exclusions holds " + std::to_string(reachable);
}

Scorer::Scorer(const Corpus& corpus, SearchIndex& index, ScoreOptions options)
    : corpus_(corpus), index_(index), options_(std::move(options)) {
    require_index_on_corpus(index, corpus, "Scorer");
    if (options_.p < 1 || options_.q < 1) throw UsageError("p and q must be at least 1");
    if (std::max(options_.p, options_.q) > SearchIndex::max_k)
        throw UsageError("p and q must be at most " + std::to_string(SearchIndex::max_k));
}

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
        // Too many of the cached neighbours are excluded: search this row's neighbours directly.
        std::vector<float> v(corpus_.manifest().dim);
        corpus_.vectors().row_as_f32(row, v.data());
        SearchQueries query{v.data(), 1, v.size(), {}, {n_rows}, {}, {}};
        std::vector<std::int64_t> left_out = excluded;
        left_out.push_back(static_cast<std::int64_t>(row));
        query.excluded.add(left_out);
        const TopK top = index_.search(query, need);
        if (top.count[0] < need)
            throw UsageError("q = " + std::to_string(options_.q) + " is more than the " + std::to_string(top.count[0]) +
                             " papers a neighbour can reach within the cutoff and exclusions");
        sims.assign(top.sims.begin(), top.sims.begin() + static_cast<std::ptrdiff_t>(need));
    }
    return sims;
}

struct Scorer::Searches {
    TopK top;                   ///< the nearest max(p, q)
    TopK hd_top;                ///< the nearest historical papers (the window before the split)
    std::optional<TopK> cd_top; ///< the nearest contemporary papers, rows [split, cutoff)
};

Scorer::Searches Scorer::search_all(const SearchQueries& queries) {
    const std::size_t k = std::max(options_.p, options_.q), n_hd = options_.hd_neighbors;
    Searches found;
    found.top = index_.search(queries, k);
    // HD: the nearest historical papers, rows [historical_from, split) within the cutoff.
    // Without a split every searchable paper is historical, and the main search already holds
    // the nearest ones whenever it kept at least as many.
    if (!options_.split_row && k >= n_hd) {
        found.hd_top = found.top;
    } else {
        SearchQueries historical = queries;
        if (options_.split_row) {
            for (auto& limit : historical.row_limit) limit = std::min(limit, *options_.split_row);
            if (options_.historical_from_row) historical.row_begin.assign(queries.n_queries, *options_.historical_from_row);
        }
        found.hd_top = index_.search(historical, n_hd);  // an empty window leaves HD null
    }
    // CD and CI: the same index, each idea's rows [split, cutoff).
    if (options_.split_row && *options_.split_row < corpus_.size() && corpus_.manifest().n_with_citations > 0) {
        SearchQueries contemporary = queries;
        contemporary.row_begin.assign(queries.n_queries, *options_.split_row);
        found.cd_top = index_.search(contemporary, n_hd);
    }
    return found;
}

/// RND and its relatives: the idea's densities against its P nearest papers' own.
void Scorer::score_relative(std::size_t i, const ScoreInput& input, const TopK& top, IdeaScore& s) {
    const std::size_t p = options_.p, q = options_.q, k = std::max(p, q), n_hd = options_.hd_neighbors;
    double nd = 0;
    for (std::size_t r = 0; r < q; ++r) nd += 1.0 - static_cast<double>(top.sim(i, r));
    s.nd = nd / static_cast<double>(q);
    s.density_p = density_of(std::span<const float>(&top.sims[i * k], p), p, DensityKind::mean_cosine);
    const double nd_euclid = density_of(std::span<const float>(&top.sims[i * k], q), q, DensityKind::mean_euclidean);
    const std::vector<std::int64_t> excluded = sorted_rows(input.excluded, i);
    std::vector<double> euclid(p), their_hd(p, std::nan(""));
    const bool rel_hd = (options_.include_self ? q - 1 : q) >= n_hd && k >= n_hd;
    for (std::size_t r = 0; r < p; ++r) {
        const std::vector<float> sims = density_sims(static_cast<std::size_t>(top.row(i, r)), s.searchable, excluded);
        if (rel_hd) their_hd[r] = density_of(sims, n_hd, DensityKind::mean_euclidean);
        // With include_self the row itself is one of the q, at distance 0 in both metrics.
        double cosine = 0, euclidean_sum = 0;
        for (float sim : sims) {
            cosine += 1.0 - static_cast<double>(sim);
            euclidean_sum += unit_euclidean(sim);
        }
        s.neighbor_nd.push_back(cosine / static_cast<double>(q));
        euclid[r] = euclidean_sum / static_cast<double>(q);
    }
    s.rnd = relative_rank(s.nd, s.neighbor_nd);
    s.rnd_euclid = relative_rank(nd_euclid, euclid);
    s.rel_hd = rel_hd ? relative_rank(density_of(std::span<const float>(&top.sims[i * k], n_hd), n_hd,
                                                 DensityKind::mean_euclidean),
                                      their_hd)
                      : std::nan("");
    s.rnd_hd = (s.rnd + s.rel_hd) / 2.0;
    if ((options_.include_self ? q - 1 : q) > 0) s.densities_by = join_for(s.searchable).computed_by;
}

/// HD over the historical window, and ON with the contemporary papers' citations.
void Scorer::score_hd_on(std::size_t i, const Searches& found, IdeaScore& s) {
    const std::size_t n_hist = std::min(found.hd_top.count[i], options_.hd_neighbors);
    double hd = 0;
    for (std::size_t r = 0; r < n_hist; ++r) hd += euclidean(found.hd_top.sim(i, r));
    s.hd = n_hist ? hd / static_cast<double>(n_hist) : std::nan("");
    if (!found.cd_top || found.cd_top->count[i] == 0 || n_hist == 0) return;
    const TopK& cd_top = *found.cd_top;
    double cd = 0, ci = 0;
    std::size_t cited = 0;
    for (std::size_t r = 0; r < cd_top.count[i]; ++r) {
        cd += euclidean(cd_top.sim(i, r));
        const Paper paper = corpus_.paper(static_cast<std::size_t>(cd_top.row(i, r)));
        if (paper.citations) {
            ci += static_cast<double>(*paper.citations);
            ++cited;
        }
    }
    cd /= static_cast<double>(cd_top.count[i]);
    if (cited > 0 && cd > 0) s.on = s.hd * (ci / static_cast<double>(cited)) / cd;
}

void Scorer::score_idea(std::size_t i, const ScoreInput& input, const Searches& found, IdeaScore& s) {
    const std::size_t p = options_.p, q = options_.q, k = std::max(p, q);
    const TopK& top = found.top;
    if (top.count[i] < k)
        throw UsageError("idea " + std::to_string(i) + ": p = " + std::to_string(p) + " and q = " + std::to_string(q) +
                         " need " + std::to_string(k) + " papers, but its cutoff, exclusions and filter leave " +
                         std::to_string(top.count[i]));
    for (std::size_t r = 0; r < k; ++r) {
        s.neighbor_rows.push_back(top.row(i, r));
        s.neighbor_sims.push_back(top.sim(i, r));
    }
    score_relative(i, input, top, s);
    score_hd_on(i, found, s);
}

std::vector<IdeaScore> Scorer::score(const ScoreInput& input) {
    const std::size_t n = input.n_ideas;
    SearchQueries queries{input.vectors, n, input.dim, {}, input.row_limit, input.excluded, input.filters};
    if (queries.row_limit.empty()) queries.row_limit.assign(n, corpus_.size());
    const Searches found = search_all(queries);
    std::vector<IdeaScore> scores(n);
    for (std::size_t i = 0; i < n; ++i) {
        scores[i].searchable = queries.row_limit[i];
        score_idea(i, input, found, scores[i]);
    }
    return scores;
}

}  // namespace novelty
