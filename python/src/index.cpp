// novelty._core.Index: a corpus loaded into a search backend, searched from Python with the GIL
// released; query arrays reach the engine in place when they are float32 and C-contiguous.
#include "bindings.hpp"

#include "novelty/search/backends.hpp"
#include "novelty/util/error.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>

namespace novelty::python {

namespace {

IndexHandle* make_index(const CorpusHandle& corpus, const std::string& device, const std::string& storage,
                        std::size_t memory_mib, std::size_t threads) {
    auto* h = new IndexHandle;
    h->corpus = corpus.corpus;
    h->corpus_lock = corpus.lock;
    // An empty storage is each backend's default (CUDA f16, CPU f32); a named one applies to the
    // backend chosen (CPU: f32, bf16 or int8; CUDA: f16, bf16 or f32).
    const bool on_cpu = device == "cpu" || (device == "auto" && auto_device() == "cpu");
    BackendChoice choice;
    choice.device = device;
    choice.device_memory_mib = memory_mib;
    if (!storage.empty()) (on_cpu ? choice.storage : choice.device_storage) = storage;
    try {
        nb::gil_scoped_release release;
        h->backend = make_backend(choice);
        h->backend->tuning.threads = threads;
        h->index = h->backend->build(VectorView::of(h->corpus->vectors()));
    } catch (...) {
        delete h;
        throw;
    }
    return h;
}

}  // namespace

namespace {

using SearchResult = std::tuple<nb::ndarray<nb::numpy, float>, nb::ndarray<nb::numpy, std::int64_t>,
                                nb::ndarray<nb::numpy, std::int64_t>>;

/// The queries of `queries` (an array; null: the records' own vectors) with the scopes and
/// filters of `resolved` (null: every row, nothing left out).
SearchResult search(IndexHandle& h, const std::optional<AnyArray>& queries, std::size_t k,
                    const ResolvedHandle* resolved) {
    if (k < 1 || k > SearchIndex::max_k)
        throw UsageError("k must be 1.." + std::to_string(SearchIndex::max_k) + ", not " + std::to_string(k), "k");
    if (!queries && !resolved) throw UsageError("give the queries as an array or as resolved records", "queries");
    QueryMatrix q;
    if (queries) q = query_matrix(*queries, h.index->dim(), "queries");
    SearchQueries s;
    if (resolved) {
        if (resolved->corpus != h.corpus) throw UsageError("the records were resolved against another corpus", "resolved");
        s = resolved_queries(*resolved, queries ? &q : nullptr);
        q.n = s.n_queries;
    } else {
        s.vectors = q.data;
        s.n_queries = q.n;
        s.dim = q.dim;
    }
    TopK top;
    if (q.n > 0) {
        nb::gil_scoped_release release;
        std::lock_guard<CallLock> lock(h.mutex);
        const auto start = std::chrono::steady_clock::now();
        top = h.index->search(s, k);
        h.last_engine_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::vector<std::int64_t> counts(top.count.begin(), top.count.end());
    const std::size_t n = q.n;
    if (n == 0) {
        top.sims.clear();
        top.rows.clear();
    }
    return {float_array(std::move(top.sims), n, k), int_array(std::move(top.rows), n, k), int_array(std::move(counts), n, 0)};
}

}  // namespace

void bind_index(nb::module_& m) {
    nb::class_<IndexHandle>(m, "Index", "A corpus's vectors loaded into a search backend (cpu or cuda).")
        .def("__init__", [](IndexHandle* self, const CorpusHandle& corpus, const std::string& device,
                            const std::string& storage, std::size_t memory_mib, std::size_t threads) {
            IndexHandle* made = make_index(corpus, device, storage, memory_mib, threads);
            new (self) IndexHandle;
            self->corpus = std::move(made->corpus);
            self->corpus_lock = std::move(made->corpus_lock);
            self->backend = std::move(made->backend);
            self->index = std::move(made->index);
            delete made;
        }, nb::arg("corpus"), nb::arg("device") = "auto", nb::arg("storage") = "", nb::arg("memory_mib") = 0,
           nb::arg("threads") = 0)
        .def_prop_ro("device", [](const IndexHandle& h) { return h.index->name(); })
        .def_prop_ro("label", [](const IndexHandle& h) { return h.index->label(); })
        .def_prop_ro("n_rows", [](const IndexHandle& h) { return h.index->n_rows(); })
        .def_prop_ro("dim", [](const IndexHandle& h) { return h.index->dim(); })
        .def_prop_ro("last_engine_seconds", [](const IndexHandle& h) { return h.last_engine_seconds.load(); },
                     "Seconds the engine itself spent in the last search (the rest of a call is the binding's).")
        .def("search", &search, nb::arg("queries").none(), nb::arg("k"), nb::arg("resolved").none() = nb::none(),
             "Top-k rows per query: (sims float32 n x k, rows int64 n x k, counts int64 n); similarity "
             "descending, ties by lower row; slots past counts[i] hold row -1 and similarity -inf.");
}

}  // namespace novelty::python
