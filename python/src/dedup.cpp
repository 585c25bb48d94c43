// novelty._core.dedup: near-duplicate clusters of idea vectors (engine/include/novelty/scoring/
// dedup.hpp), on the search backend of an index, and each idea's closest corpus paper at or above
// the threshold, as `novelty dedup --against DIR` computes them.
#include "bindings.hpp"

#include "novelty/scoring/dedup.hpp"
#include "novelty/util/error.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace novelty::python {

namespace {

/// Per idea: cluster, similarity to its representative, mean similarity (NaN for a singleton);
/// per cluster: representative; the extra rounds; per idea the archive row (-1: none) and its
/// similarity (0 for none).
using DedupArrays = std::tuple<std::vector<std::size_t>, std::vector<float>, std::vector<double>,
                               std::vector<std::size_t>, std::size_t, std::vector<std::int64_t>, std::vector<float>>;

Representative representative_of(const std::string& text) {
    if (text == "central") return Representative::central;
    if (text == "first") return Representative::first;
    throw UsageError("representative must be central or first, not '" + text + "'", "representative");
}

DedupArrays dedup_py(IndexHandle& h, const AnyArray& vectors, const std::vector<int>& active_flags, double threshold,
                     const std::string& representative, std::size_t first_k, bool against_corpus, nb::object progress) {
    if (!(threshold >= -1 && threshold <= 1)) throw UsageError("threshold must be in [-1, 1]", "threshold");
    const QueryMatrix q = query_matrix(vectors, h.index->dim(), "vectors");
    if (active_flags.size() != q.n)
        throw UsageError("active has " + std::to_string(active_flags.size()) + " entries for " + std::to_string(q.n) +
                         " ideas", "active");
    const std::vector<char> active(active_flags.begin(), active_flags.end());
    DedupOptions options;
    options.threshold = static_cast<float>(threshold);
    options.representative = representative_of(representative);
    options.first_k = first_k;
    options.progress = progress_callback(std::move(progress));
    nb::gil_scoped_release release;
    std::lock_guard<CallLock> lock(h.mutex);
    const DedupResult r = dedup_ideas(*h.backend, q.data, q.n, q.dim, active, options);
    std::vector<std::int64_t> rows(q.n, -1);
    std::vector<float> sims(q.n, 0.0f);
    if (against_corpus && q.n > 0) {
        if (h.corpus->size() == 0) throw CorpusError(h.corpus->dir() + ": the corpus is empty");
        const std::vector<ArchiveMatch> matches =
            match_archive(*h.backend, VectorView::of(h.corpus->vectors()), q.data, q.n, q.dim, active, options.threshold);
        for (std::size_t i = 0; i < q.n; ++i) {
            rows[i] = matches[i].row;
            sims[i] = matches[i].sim;
        }
    }
    return {r.cluster, r.sim_to_representative, r.mean_sim, r.representative, r.extra_rounds, rows, sims};
}

}  // namespace

void bind_dedup(nb::module_& m) {
    m.def("dedup", &dedup_py, nb::arg("index"), nb::arg("vectors"), nb::arg("active"), nb::arg("threshold"),
          nb::arg("representative"), nb::arg("first_k"), nb::arg("against_corpus"), nb::arg("progress") = nb::none(),
          "Near-duplicate clusters of n idea vectors (active[i] == 0: a singleton never linked): (cluster per idea, "
          "sim to representative, mean sim, representative per cluster, extra rounds, closest corpus row per idea "
          "or -1, its sim).");
}

}  // namespace novelty::python
