#include "novelty/request/score_run.hpp"

#include "novelty/request/scope.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <iterator>

namespace novelty {

const char* const score_methods[8] = {"rnd", "hd", "on", "density", "density_p", "rnd_euclid", "rel_hd", "rnd_hd"};

void check_score_settings(const ScoreRunSettings& s) {
    for (const auto& m : s.methods)
        if (std::find(std::begin(score_methods), std::end(score_methods), m) == std::end(score_methods))
            throw UsageError("unknown method '" + m + "' (expected rnd, hd, on, density, density_p, rnd_euclid, rel_hd, rnd_hd)",
                             "methods");
    const std::string range = "1.." + std::to_string(SearchIndex::max_k);
    if (s.p < 1 || s.p > SearchIndex::max_k) throw UsageError("p must be " + range, "p");
    if (s.q < 1 || s.q > SearchIndex::max_k) throw UsageError("q must be " + range, "q");
    if ((s.methods.count("rel_hd") || s.methods.count("rnd_hd")) && (s.include_self ? s.q - 1 : s.q) < 5)
        throw UsageError("rel_hd and rnd_hd need q >= 5 (6 with include_self): each neighbour's HD is read from its q "
                         "nearest papers", "q");
}

DensityMethod density_method(const std::string& name) {
    if (name == "auto") return DensityMethod::by_cost;
    if (name == "on-demand") return DensityMethod::on_demand;
    if (name == "self-join") return DensityMethod::self_join;
    throw UsageError("unknown densities '" + name + "' (expected auto, on-demand or self-join)", "densities");
}

ScoreRun score_run(const Corpus& corpus, const ScoreRunSettings& settings, const std::string& backend_label) {
    check_score_settings(settings);
    ScoreRun run;
    run.options.p = settings.p;
    run.options.q = settings.q;
    run.options.include_self = settings.include_self;
    run.options.extra = settings.extra;
    run.options.densities = settings.densities;
    run.options.write_cache = settings.write_cache;
    const ScoreWindows windows = score_windows(corpus, settings.split, settings.historical_from);
    run.options.split_row = windows.split_row;
    run.options.historical_from_row = windows.historical_from_row;
    run.report = score_report_context(corpus, settings.p, settings.q, settings.include_self, settings.evidence, backend_label);
    run.report.split = settings.split;
    run.report.historical_from = windows.historical_from;
    run.report.methods = settings.methods;
    return run;
}

}  // namespace novelty
