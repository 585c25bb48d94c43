// A score run as its user gives it (the CLI's flags, Python's keywords): the scorer's options
// and the provenance its records report, made in one place for every edge.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/request/result_json.hpp"
#include "novelty/scoring/scoring.hpp"

#include <cstddef>
#include <set>
#include <string>

namespace novelty {

struct ScoreRunSettings {
    std::size_t p = 100, q = 50, extra = 8, evidence = 10;
    bool include_self = false;
    std::set<std::string> methods;  ///< empty: rnd, hd, on, density
    std::string split;              ///< "" = none
    std::string historical_from;    ///< "" = the paper's 2011 when it lies before the split; "none"; a date
    DensityMethod densities = DensityMethod::by_cost;  ///< how missing densities are found (ScoreOptions::densities)
    bool write_cache = true;        ///< store what is computed in the corpus directory
};

struct ScoreRun {
    ScoreOptions options;        ///< p, q, include_self, extra, the split's windows, the density path
    ScoreReportContext report;   ///< the provenance of each record: corpus, p, q, split, window, methods, backend
};

/// The score methods a run may report, in the order the docs list them.
extern const char* const score_methods[8];

/// Refuses settings no run can use (UsageError naming the setting): an unknown method, p or q
/// outside 1..max_k, rel_hd or rnd_hd with fewer than 5 neighbours of q left (6 with
/// include_self: each neighbour's HD is read from its q nearest papers).
void check_score_settings(const ScoreRunSettings& settings);

/// "auto" (by_cost), "on-demand" or "self-join", as every edge names them; UsageError naming
/// "densities" otherwise.
DensityMethod density_method(const std::string& name);

/// The run of `settings` (checked by check_score_settings) on `corpus` with a backend labelled
/// `backend_label`. Throws UsageError naming split or historical_from for a date it cannot read
/// (score_windows).
ScoreRun score_run(const Corpus& corpus, const ScoreRunSettings& settings, const std::string& backend_label);

}  // namespace novelty
