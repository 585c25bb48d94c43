// novelty._core.score: the scorer over already-resolved ideas (vectors, row limits, exclusions),
// giving each idea's result as the JSON text the CLI writes (io/result_json.hpp), byte for byte.
#include "bindings.hpp"

#include "novelty/io/query_records.hpp"
#include "novelty/io/result_json.hpp"
#include "novelty/request/scope.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/util/error.hpp"

#include <nanobind/stl/set.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace novelty::python {

namespace {

/// What the Python call gives besides the vectors.
struct ScoreRequest {
    std::vector<std::string> ids;
    std::vector<std::string> cutoffs;                   ///< per idea, "" = none
    std::vector<std::size_t> row_limit;                 ///< per idea
    std::vector<std::vector<std::int64_t>> excluded;    ///< per idea: rows
    std::vector<std::vector<std::string>> excluded_ids; ///< per idea: ids, for the provenance
};

struct ScoreSettings {
    std::size_t p = 100, q = 50, extra = 8, evidence = 10;
    bool include_self = false;
    std::set<std::string> methods;
    std::string split, historical_from;
};

const std::set<std::string> known_methods{"rnd", "hd", "on", "density", "density_p", "rnd_euclid", "rel_hd", "rnd_hd"};

/// The scorer's options, as `novelty score` makes them from its flags; `historical_from` gets the
/// window's first date as used ("" for none).
ScoreOptions options_of(const ScoreSettings& s, const Corpus& corpus, std::string& historical_from) {
    ScoreOptions options;
    options.p = s.p;
    options.q = s.q;
    options.include_self = s.include_self;
    options.extra = s.extra;
    options.write_cache = true;
    const ScoreWindows windows = score_windows(corpus, s.split, s.historical_from);
    options.split_row = windows.split_row;
    options.historical_from_row = windows.historical_from_row;
    historical_from = windows.historical_from;
    return options;
}

void check_settings(const ScoreSettings& s, const ScoreRequest& r, std::size_t n) {
    for (const auto& m : s.methods)
        if (!known_methods.count(m))
            throw UsageError("unknown method '" + m + "' (expected rnd, hd, on, density, density_p, rnd_euclid, rel_hd, rnd_hd)",
                             "methods");
    if (s.p < 1 || s.p > SearchIndex::max_k) throw UsageError("p must be 1..2048", "p");
    if (s.q < 1 || s.q > SearchIndex::max_k) throw UsageError("q must be 1..2048", "q");
    if ((s.methods.count("rel_hd") || s.methods.count("rnd_hd")) && (s.include_self ? s.q - 1 : s.q) < 5)
        throw UsageError("rel_hd and rnd_hd need q >= 5 (6 with include_self): each neighbour's HD is read from its q "
                         "nearest papers", "q");
    if (r.ids.size() != n || r.cutoffs.size() != n || r.row_limit.size() != n || r.excluded.size() != n ||
        r.excluded_ids.size() != n)
        throw UsageError("ids, cutoffs, row limits and exclusions must have one entry per idea", "ideas");
}

/// The provenance of the run: the request layer's common part, then the split, the historical
/// window and the methods, as `novelty score` sets them.
ScoreReportContext report_of(const ScoreSettings& s, const Corpus& corpus, const std::string& historical_from,
                             const std::string& backend) {
    ScoreReportContext report = score_report_context(corpus, s.p, s.q, s.include_self, s.evidence, backend);
    report.split = s.split;
    report.historical_from = historical_from;
    report.methods = s.methods;
    return report;
}

/// The scoring itself: called without the GIL, with the index's and the corpus's locks held.
std::vector<std::string> score_locked(IndexHandle& h, const QueryMatrix& q, const ScoreRequest& r,
                                      const ScoreSettings& s, ProgressFn progress) {
    const Corpus& corpus = *h.corpus;
    for (std::size_t i = 0; i < q.n; ++i) {
        const std::size_t reachable = reachable_papers(r.row_limit[i], corpus.size(), r.excluded[i].data(), r.excluded[i].size());
        const std::string problem = reach_problem(s.p, s.q, reachable, r.cutoffs[i]);
        if (!problem.empty()) throw UsageError("idea '" + r.ids[i] + "': " + problem, "ideas");
    }
    std::string historical_from;
    ScoreOptions options = options_of(s, corpus, historical_from);
    options.on_density_progress = std::move(progress);
    const ScoreReportContext report = report_of(s, corpus, historical_from, h.backend->label());
    ScoreInput input;
    input.vectors = q.data;
    input.n_ideas = q.n;
    input.dim = q.dim;
    input.row_limit = r.row_limit;
    for (const auto& rows : r.excluded) input.excluded.add(rows);
    Scorer scorer(corpus, *h.index, options);
    const std::vector<IdeaScore> scores = q.n == 0 ? std::vector<IdeaScore>{} : scorer.score(input);
    std::vector<std::string> lines(q.n);
    for (std::size_t i = 0; i < q.n; ++i)
        lines[i] = score_result_json(corpus, report, r.ids[i], scores[i], r.cutoffs[i], r.excluded_ids[i]);
    return lines;
}

std::vector<std::string> score_all(IndexHandle& h, const QueryMatrix& q, const ScoreRequest& r, const ScoreSettings& s,
                                   nb::object progress) {
    ProgressFn on_progress = progress_callback(std::move(progress));
    nb::gil_scoped_release release;
    std::lock_guard<CallLock> index_lock(h.mutex);
    std::lock_guard<CallLock> corpus_lock(*h.corpus_lock);
    return score_locked(h, q, r, s, std::move(on_progress));
}

std::vector<std::string> score_py(IndexHandle& h, const AnyArray& vectors, ScoreRequest request, ScoreSettings settings,
                                  nb::object progress) {
    const QueryMatrix q = query_matrix(vectors, h.index->dim(), "vectors");
    check_settings(settings, request, q.n);
    return score_all(h, q, request, settings, std::move(progress));
}

}  // namespace

void bind_score(nb::module_& m) {
    m.def("score", [](IndexHandle& h, const AnyArray& vectors, std::vector<std::string> ids, std::vector<std::string> cutoffs,
                      std::vector<std::size_t> row_limit, std::vector<std::vector<std::int64_t>> excluded,
                      std::vector<std::vector<std::string>> excluded_ids, std::size_t p, std::size_t q,
                      std::set<std::string> methods, std::string split, std::string historical_from, bool include_self,
                      std::size_t extra, std::size_t evidence, nb::object progress) {
        ScoreRequest r{std::move(ids), std::move(cutoffs), std::move(row_limit), std::move(excluded), std::move(excluded_ids)};
        ScoreSettings s{p, q, extra, evidence, include_self, std::move(methods), std::move(split), std::move(historical_from)};
        return score_py(h, vectors, std::move(r), std::move(s), std::move(progress));
    }, nb::arg("index"), nb::arg("vectors"), nb::arg("ids"), nb::arg("cutoffs"), nb::arg("row_limit"), nb::arg("excluded"),
       nb::arg("excluded_ids"), nb::arg("p"), nb::arg("q"), nb::arg("methods"), nb::arg("split"),
       nb::arg("historical_from"), nb::arg("include_self"), nb::arg("extra"), nb::arg("evidence"),
       nb::arg("progress") = nb::none(),
       "Scores resolved ideas; one JSON text per idea, as `novelty score` writes it.");
}

}  // namespace novelty::python
