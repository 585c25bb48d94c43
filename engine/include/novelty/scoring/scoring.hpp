// Novelty scores of ideas against a corpus: Relative Neighbor Density (RND), its neighbour
// density ND (the absolute density), Historical Dissimilarity (HD) and Overall Novelty (ON).
// docs/scoring.md gives the definitions and the exactness argument.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/search.hpp"

#include <memory>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

/// How the neighbours' densities that the density store lacks are found.
enum class DensityMethod {
    /// The default: the prefixes whose symmetric self-join costs less than searching the rows the
    /// ideas reach are self-joined (and stored as `novelty index` stores them); the rest are
    /// searched on demand (plan_densities, docs/scoring.md).
    by_cost,
    /// Every missing list searched on demand and appended to the store.
    on_demand,
    /// The reference: each idea's neighbour densities from the full self-join of its row prefix
    /// (computed and cached per prefix), the store not consulted.
    self_join,
};

struct ScoreOptions {
    std::size_t p = 100;          ///< neighbours whose densities form the reference distribution
    std::size_t q = 50;           ///< neighbours averaged into a density
    /// Count a neighbour's own row among its q nearest (distance 0), as the paper's Algorithm 1
    /// reads; by default a paper's density leaves itself out.
    bool include_self = false;
    std::size_t extra = 8;        ///< cached neighbours beyond q (see novelty index)
    std::size_t hd_neighbors = 5; ///< HD/CD average over this many nearest papers
    /// Papers before this row are historical, from it on contemporary (the split date's row);
    /// without it HD uses the whole searchable corpus and ON is null.
    std::optional<std::size_t> split_row;
    /// With a split: historical papers start at this row (the RND paper's window is 2011 to the
    /// split, 2021); rows before it are neither historical nor contemporary. Without it (or
    /// without a split) the historical papers start at row 0.
    std::optional<std::size_t> historical_from_row;
    /// Progress of the densities computed on demand (neighbour rows searched, of the batch's
    /// total; or the self-join's blocks on the reference path).
    ProgressFn on_density_progress;
    /// Told when a computed self-join cannot be cached (a read-only corpus); scoring goes on.
    std::function<void(const std::string&)> on_cache_warning;
    /// Store self-joins computed on demand in the corpus's cache directory. False (a server that
    /// must not write into its corpus): caches are still read, computed joins stay in memory.
    bool write_cache = true;
    /// How the densities the store lacks are found (DensityMethod); every method gives the same
    /// results, bit for bit.
    DensityMethod densities = DensityMethod::by_cost;
    /// Told, for each score() call whose ideas lack densities in the store, how they will be
    /// found: "self-join of 87,691 rows (41,022 reached)", "on demand (1,204 lists searched)", ...
    /// (DensityPlan::summary), before the work starts.
    std::function<void(const std::string&)> on_density_plan;
    /// Progress of the ideas' own searches in score(): ideas searched, of the call's total.
    ProgressFn on_search_progress;
};

/// How the densities of the neighbours scored so far were found (Scorer::density_counts).
struct DensityCounts {
    std::size_t served = 0;    ///< read from a stored list (the store, a self-join cache)
    std::size_t computed = 0;  ///< lists computed (and stored) on demand
    /// Neighbours whose idea excludes more rows of the prefix than a list of max_k can spare:
    /// searched with those exclusions, in the same batch, and not stored.
    std::size_t searched_with_exclusions = 0;
    std::size_t searches = 0;  ///< batched searches run for them (one per 65,536 lists of a score call, each in calls of 4,096 rows)
    std::size_t rows_searched = 0;  ///< queries of those searches (a row's segments between its prefixes count each)
    /// Query-row pairs those searches spanned: a row missing lists at several cutoffs spans up to
    /// its largest once, not once per cutoff.
    std::uint64_t row_pairs_searched = 0;
    std::size_t joins = 0;     ///< prefixes self-joined (or read from an earlier run's cache) because cheaper
};

/// The ideas to score: float32 vectors (normalised by the scorer), per idea a searchable row
/// prefix (its cutoff) and rows left out (its exclude list and, for a corpus paper, itself).
struct ScoreInput {
    const float* vectors = nullptr;
    std::size_t n_ideas = 0;
    std::size_t dim = 0;
    std::vector<std::size_t> row_limit;  ///< per idea; empty = whole corpus
    RowLists excluded;                   ///< per idea; may be empty
    /// Metadata filters (SearchQueries::filters: none, one for all, or one per idea): an idea's
    /// neighbours, historical and contemporary papers are found among the papers its filter
    /// allows. The neighbours' own densities stay the corpus's (within the idea's cutoff and
    /// exclusions), so RND compares the idea with its filtered neighbours on the corpus's scale.
    std::vector<std::shared_ptr<const RowFilter>> filters;

    /// The ideas of a search: its vectors (views: `queries` must outlive the input), row limits,
    /// exclusions and filters (row begins and self-exclusion have no meaning for an idea).
    static ScoreInput of(const SearchQueries& queries);
};

struct IdeaScore {
    double rnd = 0;                  ///< in [0, 100]
    double nd = 0;                   ///< the idea's neighbour density (mean cosine distance to its q nearest)
    double hd = 0;                   ///< mean Euclidean distance to the nearest historical papers
    std::optional<double> on;        ///< HD * CI / CD, when a split and citation counts allow
    std::vector<std::int64_t> neighbor_rows;  ///< the idea's max(p, q) nearest, nearest first
    std::vector<float> neighbor_sims;
    std::vector<double> neighbor_nd; ///< ND of each of the p nearest
    /// The absolute local density of the RND paper's Table 3: mean cosine distance from the idea
    /// to its P nearest papers (its first-level neighbours).
    double density_p = 0;
    /// RND with the Euclidean distance sqrt(2 - 2 sim) in place of the cosine distance (Table 3):
    /// the idea's mean Euclidean distance to its q nearest, ranked among its p nearest papers' own.
    double rnd_euclid = 0;
    /// Relative HD: the idea's HD over its hd_neighbors nearest papers ranked, as RND ranks
    /// densities, among its p nearest papers' own HDs (each over its hd_neighbors nearest other
    /// papers within the idea's prefix and exclusions; --split is not applied). NaN when q (q - 1
    /// with include_self) is below hd_neighbors: the cached lists are too short.
    double rel_hd = 0;
    /// The mean of rnd and rel_hd: the winner of the score sweep on the development set
    /// (docs/scoring.md); NaN when rel_hd is.
    double rnd_hd = 0;
    std::size_t searchable = 0;      ///< rows in the idea's prefix
    /// The label of the backend that computed the self-join the neighbours' densities came from
    /// (SelfJoin::computed_by; it may be an earlier run's cache); empty when no self-join was
    /// needed (q = 1 with include_self) or the cache predates the label.
    std::string densities_by;
    /// How those densities were found, comma-separated when several ways served its neighbours:
    /// "store" (a list kept by an earlier call or run, or `novelty index`'s cache), "self-join"
    /// (a prefix joined by this call because cheaper, or the reference path), "on-demand"
    /// (searched by this call); empty when none was needed.
    std::string densities_path;
};

/// Papers an idea can reach: rows [0, row_limit) (capped at n_rows) less its distinct excluded
/// rows among them. Scoring needs more than max(p, q) of them (its neighbours' densities leave
/// each neighbour out).
std::size_t reachable_papers(std::size_t row_limit, std::size_t n_rows, const std::int64_t* excluded,
                             std::size_t n_excluded);

/// The problem when too few papers are reachable, "" when enough are: "p = P and q = Q need more
/// than K papers, but WHERE less its exclusions holds N" (WHERE: "the corpus" or "the corpus up
/// to CUTOFF"). Every edge (novelty score, the server, triage) words it this way.
std::string reach_problem(std::size_t p, std::size_t q, std::size_t reachable, const std::string& cutoff);

class DensityStore;
struct PendingDensity;
struct DensitySources;

/// Scores ideas. A neighbour's density at an idea's cutoff and exclusions is read from the
/// corpus's density store (density_store.hpp) when a stored list serves it; the lists missing
/// are computed in one batched search per score() call (each neighbour row a query with its own
/// row limit) through the same index, and appended to the store. Each list keeps q + extra
/// neighbours, so that up to `extra` exclusions still leave q of them; for an idea that excludes
/// more rows of the prefix, the list is made longer (k doubled until it is enough). The result is
/// always exact. Throws UsageError when p or q exceed what an idea's prefix (less its
/// exclusions) holds.
class Scorer {
public:
    /// `index` must be built on corpus.vectors() (UsageError otherwise); it serves every search.
    Scorer(const Corpus& corpus, SearchIndex& index, ScoreOptions options);
    ~Scorer();
    std::vector<IdeaScore> score(const ScoreInput& input);
    /// Totals over every score() call so far.
    const DensityCounts& density_counts() const { return counts_; }

private:
    /// One neighbour's densities over its q nearest (cosine and Euclidean means) and its HD over
    /// its hd_neighbors nearest (NaN when relative HD is not possible).
    struct NeighbourDensity {
        double cosine = 0, euclidean = 0, hd = 0;
    };
    /// Per idea i and neighbour rank r < p (index i * p + r): its densities, reduced as soon as
    /// its similarities are found (n x p x 24 bytes, not the similarities themselves); per idea,
    /// the labels of the backends that computed them and how they were found.
    struct NeighbourSims {
        std::vector<NeighbourDensity> densities;
        std::vector<std::string> labels;
        std::vector<std::string> paths;  ///< IdeaScore::densities_path
        /// Reduces the similarities a density averages (q, or q - 1 with include_self) into slot.
        void set(std::size_t slot, const std::vector<float>& sims, const Scorer& scorer);
    };
    bool relative_hd_possible() const;
    NeighbourSims densities_on_demand(const ScoreInput& input, const TopK& top, const std::vector<IdeaScore>& scores);
    void open_store(std::size_t k);
    /// Self-joins rows [0, prefix) into the store (as `novelty index` caches it; in memory when
    /// the corpus cannot be written), or maps an earlier run's cache of it.
    void join_into_store(std::size_t prefix);
    /// Fills out.sims for the pending densities some stored list serves; returns the others.
    std::vector<PendingDensity> serve_stored(const std::vector<PendingDensity>& pending,
                                             const std::vector<std::vector<std::int64_t>>& excluded,
                                             NeighbourSims& out, DensitySources& sources, const char* path);
    /// Batched searches (density_search.hpp) for the pending densities, a bounded number of
    /// lists each (whole rows together); stores their lists.
    void search_missing(const std::vector<PendingDensity>& pending,
                        const std::vector<std::vector<std::int64_t>>& excluded, std::size_t k, NeighbourSims& out,
                        DensitySources& sources);
    /// One of them; returns the lists it computed.
    std::size_t search_group(const std::vector<PendingDensity>& pending,
                             const std::vector<std::vector<std::int64_t>>& excluded, std::size_t k,
                             const ScoreOptions& options, NeighbourSims& out, DensitySources& sources);
    NeighbourSims densities_from_joins(const ScoreInput& input, const TopK& top, const std::vector<IdeaScore>& scores);
    const SelfJoin& join_for(std::size_t n_rows);
    /// The similarities of a corpus row's nearest other rows within the prefix, less the excluded:
    /// q of them, or q - 1 with include_self (the row itself then counts at distance 0).
    std::vector<float> density_sims(std::size_t row, std::size_t n_rows, const std::vector<std::int64_t>& excluded_sorted);
    /// The searches one batch of ideas needs: its nearest max(p, q), its nearest historical
    /// papers (HD) and, with a split, its nearest contemporary ones (CD).
    struct Searches;
    Searches search_all(const SearchQueries& queries);
    /// index_.search, in calls of a few thousand ideas when on_search_progress is set.
    TopK search_ideas(const SearchQueries& queries, std::size_t k);
    void score_idea(std::size_t i, const Searches& found, const NeighbourSims& sims, IdeaScore& s);
    void score_relative(std::size_t i, const TopK& top, const NeighbourSims& sims, IdeaScore& s);
    void score_hd_on(std::size_t i, const Searches& found, IdeaScore& s);

    const Corpus& corpus_;
    SearchIndex& index_;
    ScoreOptions options_;
    std::vector<std::pair<std::size_t, SelfJoin>> joins_;
    std::unique_ptr<DensityStore> store_;
    DensityCounts counts_;
};

}  // namespace novelty
