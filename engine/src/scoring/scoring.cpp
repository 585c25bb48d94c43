// RND, ND, HD and ON scores (docs/scoring.md).
#include "scoring/density_variants.hpp"
#include "novelty/util/error.hpp"
#include "scoring/index_check.hpp"
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/scoring.hpp"
#include "search/search_rules.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace novelty {

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

struct Scorer::Searches {
    TopK top;                   ///< the nearest max(p, q)
    TopK hd_top;                ///< the nearest historical papers (the window before the split)
    std::optional<TopK> cd_top; ///< the nearest contemporary papers, rows [split, cutoff)
};

namespace {

/// Ideas per search call when the ideas' search reports progress.
constexpr std::size_t ideas_per_search = 4096;

/// Queries [first, first + n) of `all`, their scopes with them.
SearchQueries slice(const SearchQueries& all, std::size_t first, std::size_t n) {
    SearchQueries part = all;
    part.vectors = all.vectors + first * all.dim;
    part.n_queries = n;
    const auto cut = [&](std::vector<std::size_t>& v) {
        if (!v.empty()) v = std::vector<std::size_t>(v.begin() + static_cast<std::ptrdiff_t>(first),
                                                     v.begin() + static_cast<std::ptrdiff_t>(first + n));
    };
    cut(part.scope.row_begin);
    cut(part.scope.row_limit);
    if (all.scope.excluded.n_items() > 0) {
        part.scope.excluded = {};
        for (std::size_t i = first; i < first + n; ++i)
            part.scope.excluded.add({all.scope.excluded.begin(i), all.scope.excluded.begin(i) + all.scope.excluded.size(i)});
    }
    if (all.scope.filters.size() > 1)
        part.scope.filters.assign(all.scope.filters.begin() + static_cast<std::ptrdiff_t>(first),
                                  all.scope.filters.begin() + static_cast<std::ptrdiff_t>(first + n));
    return part;
}

}  // namespace

TopK Scorer::search_ideas(const SearchQueries& queries, std::size_t k) {
    const ProgressFn& progress = options_.on_search_progress;
    if (!progress || queries.n_queries <= ideas_per_search) {
        TopK top = index_.search(queries, k);
        if (progress) progress(queries.n_queries, queries.n_queries);
        return top;
    }
    TopK all = empty_top_k(queries.n_queries, k);
    progress(0, queries.n_queries);
    for (std::size_t first = 0; first < queries.n_queries; first += ideas_per_search) {
        const std::size_t n = std::min(ideas_per_search, queries.n_queries - first);
        const TopK part = index_.search(slice(queries, first, n), k);
        std::copy(part.rows.begin(), part.rows.end(), all.rows.begin() + static_cast<std::ptrdiff_t>(first * k));
        std::copy(part.sims.begin(), part.sims.end(), all.sims.begin() + static_cast<std::ptrdiff_t>(first * k));
        std::copy(part.count.begin(), part.count.end(), all.count.begin() + static_cast<std::ptrdiff_t>(first));
        progress(first + n, queries.n_queries);
    }
    return all;
}

Scorer::Searches Scorer::search_all(const SearchQueries& queries) {
    const std::size_t k = std::max(options_.p, options_.q), n_hd = options_.hd_neighbors;
    Searches found;
    found.top = search_ideas(queries, k);
    // HD: the nearest historical papers, rows [historical_from, split) within the cutoff.
    // Without a split every searchable paper is historical, and the main search already holds
    // the nearest ones whenever it kept at least as many.
    if (!options_.split_row && k >= n_hd) {
        found.hd_top = found.top;
    } else {
        SearchQueries historical = queries;
        if (options_.split_row) {
            for (auto& limit : historical.scope.row_limit) limit = std::min(limit, *options_.split_row);
            if (options_.historical_from_row)
                historical.scope.row_begin.assign(queries.n_queries, *options_.historical_from_row);
        }
        found.hd_top = index_.search(historical, n_hd);  // an empty window leaves HD null
    }
    // CD and CI: the same index, each idea's rows [split, cutoff).
    if (options_.split_row && *options_.split_row < corpus_.size() && corpus_.manifest().n_with_citations > 0) {
        SearchQueries contemporary = queries;
        contemporary.scope.row_begin.assign(queries.n_queries, *options_.split_row);
        found.cd_top = index_.search(contemporary, n_hd);
    }
    return found;
}

bool Scorer::relative_hd_possible() const {
    const std::size_t q = options_.q, n_hd = options_.hd_neighbors;
    return (options_.include_self ? q - 1 : q) >= n_hd && std::max(options_.p, q) >= n_hd;
}

void Scorer::NeighbourSims::set(std::size_t slot, const std::vector<float>& sims, const Scorer& scorer) {
    const std::size_t q = scorer.options_.q;
    NeighbourDensity& d = densities[slot];
    // With include_self the row itself is one of the q, at distance 0 in both metrics.
    double cosine = 0, euclidean_sum = 0;
    for (float sim : sims) {
        cosine += 1.0 - static_cast<double>(sim);
        euclidean_sum += unit_euclidean(sim);
    }
    d.cosine = cosine / static_cast<double>(q);
    d.euclidean = euclidean_sum / static_cast<double>(q);
    d.hd = scorer.relative_hd_possible() ? density_of(sims, scorer.options_.hd_neighbors, DensityKind::mean_euclidean)
                                         : std::nan("");
}

/// RND and its relatives: the idea's densities against its P nearest papers' own.
void Scorer::score_relative(std::size_t i, const TopK& top, const NeighbourSims& found, IdeaScore& s) {
    const std::size_t p = options_.p, q = options_.q, k = std::max(p, q), n_hd = options_.hd_neighbors;
    double nd = 0;
    for (std::size_t r = 0; r < q; ++r) nd += 1.0 - static_cast<double>(top.sim(i, r));
    s.nd = nd / static_cast<double>(q);
    s.density_p = density_of(std::span<const float>(&top.sims[i * k], p), p, DensityKind::mean_cosine);
    const double nd_euclid = density_of(std::span<const float>(&top.sims[i * k], q), q, DensityKind::mean_euclidean);
    std::vector<double> euclid(p), their_hd(p, std::nan(""));
    const bool rel_hd = relative_hd_possible();
    for (std::size_t r = 0; r < p; ++r) {
        const NeighbourDensity& d = found.densities[i * p + r];
        their_hd[r] = d.hd;
        s.neighbor_nd.push_back(d.cosine);
        euclid[r] = d.euclidean;
    }
    s.rnd = relative_rank(s.nd, s.neighbor_nd);
    s.rnd_euclid = relative_rank(nd_euclid, euclid);
    s.rel_hd = rel_hd ? relative_rank(density_of(std::span<const float>(&top.sims[i * k], n_hd), n_hd,
                                                 DensityKind::mean_euclidean),
                                      their_hd)
                      : std::nan("");
    s.rnd_hd = (s.rnd + s.rel_hd) / 2.0;
    s.densities_by = found.labels[i];
    s.densities_path = found.paths[i];
}

/// HD over the historical window, and ON with the contemporary papers' citations.
void Scorer::score_hd_on(std::size_t i, const Searches& found, IdeaScore& s) {
    const std::size_t n_hist = std::min(found.hd_top.count[i], options_.hd_neighbors);
    double hd = 0;
    for (std::size_t r = 0; r < n_hist; ++r) hd += unit_euclidean(found.hd_top.sim(i, r));
    s.hd = n_hist ? hd / static_cast<double>(n_hist) : std::nan("");
    if (!found.cd_top || found.cd_top->count[i] == 0 || n_hist == 0) return;
    const TopK& cd_top = *found.cd_top;
    double cd = 0, ci = 0;
    std::size_t cited = 0;
    for (std::size_t r = 0; r < cd_top.count[i]; ++r) {
        cd += unit_euclidean(cd_top.sim(i, r));
        const Paper paper = corpus_.paper(static_cast<std::size_t>(cd_top.row(i, r)));
        if (paper.citations) {
            ci += static_cast<double>(*paper.citations);
            ++cited;
        }
    }
    cd /= static_cast<double>(cd_top.count[i]);
    if (cited > 0 && cd > 0) s.on = s.hd * (ci / static_cast<double>(cited)) / cd;
}

/// The idea's neighbours must be there before any density is looked for.
static void check_neighbours(std::size_t i, const ScoreOptions& options, const TopK& top) {
    const std::size_t p = options.p, q = options.q, k = std::max(p, q);
    if (top.count[i] < k)
        throw UsageError("idea " + std::to_string(i) + ": p = " + std::to_string(p) + " and q = " + std::to_string(q) +
                         " need " + std::to_string(k) + " papers, but its cutoff, exclusions and filter leave " +
                         std::to_string(top.count[i]));
}

void Scorer::score_idea(std::size_t i, const Searches& found, const NeighbourSims& sims, IdeaScore& s) {
    const std::size_t k = std::max(options_.p, options_.q);
    const TopK& top = found.top;
    for (std::size_t r = 0; r < k; ++r) {
        s.neighbor_rows.push_back(top.row(i, r));
        s.neighbor_sims.push_back(top.sim(i, r));
    }
    score_relative(i, top, sims, s);
    score_hd_on(i, found, s);
}

ScoreInput ScoreInput::of(const SearchQueries& queries) {
    ScoreInput input;
    input.vectors = queries.vectors;
    input.n_ideas = queries.n_queries;
    input.dim = queries.dim;
    input.row_limit = queries.scope.row_limit;
    input.excluded = queries.scope.excluded;
    input.filters = queries.scope.filters;
    return input;
}

std::vector<IdeaScore> Scorer::score(const ScoreInput& input) {
    const std::size_t n = input.n_ideas;
    SearchQueries queries;
    queries.vectors = input.vectors;
    queries.n_queries = n;
    queries.dim = input.dim;
    queries.scope.row_limit = input.row_limit;
    queries.scope.excluded = input.excluded;
    queries.scope.filters = input.filters;
    if (queries.scope.row_limit.empty()) queries.scope.row_limit.assign(n, corpus_.size());
    const Searches found = search_all(queries);
    std::vector<IdeaScore> scores(n);
    for (std::size_t i = 0; i < n; ++i) {
        scores[i].searchable = queries.scope.row_limit[i];
        check_neighbours(i, options_, found.top);
    }
    const NeighbourSims sims = options_.densities == DensityMethod::self_join ? densities_from_joins(input, found.top, scores)
                                                       : densities_on_demand(input, found.top, scores);
    for (std::size_t i = 0; i < n; ++i) score_idea(i, found, sims, scores[i]);
    return scores;
}

Scorer::~Scorer() = default;

}  // namespace novelty
