// novelty._core.score: the scorer over already-resolved ideas (vectors, row limits, exclusions),
// giving each idea's result as the JSON text the CLI writes (io/result_json.hpp), byte for byte.
#include "bindings.hpp"

#include "novelty/request/query_records.hpp"
#include "novelty/request/result_json.hpp"
#include "novelty/request/score_run.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/util/error.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/set.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace novelty::python {

namespace {

/// The scoring itself: called without the GIL, with the index's and the corpus's locks held.
std::vector<std::string> score_locked(IndexHandle& h, const SearchQueries& q, const ResolvedHandle& r,
                                      const ScoreRunSettings& s, ProgressFn progress) {
    const Corpus& corpus = *h.corpus;
    r.batch.check_reach(corpus.size(), s.p, s.q);
    ScoreRun run = score_run(corpus, s, h.backend->label());
    run.report.ideas_precision = r.batch.embedded_precision;  // "" when the ideas came as vectors
    ScoreOptions& options = run.options;
    options.on_density_progress = std::move(progress);
    const ScoreReportContext& report = run.report;
    const ScoreInput input = ScoreInput::of(q);
    Scorer scorer(corpus, *h.index, options);
    const std::vector<IdeaScore> scores = q.n_queries == 0 ? std::vector<IdeaScore>{} : scorer.score(input);
    std::vector<std::string> lines(q.n_queries);
    for (std::size_t i = 0; i < q.n_queries; ++i)
        lines[i] = score_result_json(corpus, report, r.batch.records[i].id, scores[i], r.batch.scopes[i].cutoff,
                                     r.batch.scopes[i].excluded_ids);
    return lines;
}

std::vector<std::string> score_py(IndexHandle& h, const std::optional<AnyArray>& vectors, const ResolvedHandle& r,
                                  ScoreRunSettings settings,                                  nb::object progress) {
    check_score_settings(settings);
    if (r.corpus != h.corpus) throw UsageError("the ideas were resolved against another corpus", "ideas");
    QueryMatrix m;
    if (vectors) m = query_matrix(*vectors, h.index->dim(), "vectors");
    const SearchQueries q = resolved_queries(r, vectors ? &m : nullptr);
    ProgressFn on_progress = progress_callback(std::move(progress));
    nb::gil_scoped_release release;
    std::lock_guard<CallLock> index_lock(h.mutex);
    std::lock_guard<CallLock> corpus_lock(*h.corpus_lock);
    return score_locked(h, q, r, settings, std::move(on_progress));
}

}  // namespace

void bind_score(nb::module_& m) {
    m.def("score", [](IndexHandle& h, const ResolvedHandle& ideas, const std::optional<AnyArray>& vectors, std::size_t p, std::size_t q,
                      std::set<std::string> methods, std::string split, std::string historical_from, bool include_self,
                      std::size_t extra, std::size_t evidence, nb::object progress, const std::string& densities) {
        ScoreRunSettings s;
        s.p = p;
        s.q = q;
        s.extra = extra;
        s.evidence = evidence;
        s.include_self = include_self;
        s.methods = std::move(methods);
        s.split = std::move(split);
        s.historical_from = std::move(historical_from);
        s.densities = density_method(densities);
        return score_py(h, vectors, ideas, std::move(s), std::move(progress));
    }, nb::arg("index"), nb::arg("ideas"), nb::arg("vectors").none(), nb::arg("p"), nb::arg("q"), nb::arg("methods"),
       nb::arg("split"), nb::arg("historical_from"), nb::arg("include_self"), nb::arg("extra"), nb::arg("evidence"),
       nb::arg("progress") = nb::none(), nb::arg("densities") = "auto",
       "Scores resolved ideas (with `vectors`, an array of one row per idea; else their own); one JSON text per "
       "idea, as `novelty score` writes it.");
}

}  // namespace novelty::python
