// novelty._core: the engine's corpus, search index, scorer, encoders and metrics for Python.
// The public API is the pure-Python package around it (python/novelty, docs/python.md).
#include "bindings.hpp"

#include "novelty/search/backends.hpp"
#include "novelty/search/devices.hpp"

#include <nanobind/stl/string.h>

NB_MODULE(_core, m) {
    using namespace novelty::python;
    m.doc() = "The novelty engine's compiled core; use the `novelty` package instead.";
    m.attr("__version__") = NOVELTY_VERSION;
    m.def("cuda_compiled", &novelty::cuda_compiled, "True when the CUDA backend is compiled in (a cu13 build).");
    m.def("auto_device", &novelty::auto_device, "What device='auto' resolves to here: 'cuda' or 'cpu'.");
    m.def("query_copies", &query_copies,
          "How many query arrays were copied before reaching the engine (not float32 or not C-contiguous).");
    m.def("last_query_pointer", &last_query_pointer, "The address of the last query matrix the engine read.");
    bind_errors(m);
    bind_corpus(m);
    bind_embedder(m);
    bind_index(m);
    bind_score(m);
    bind_retrieve(m);
    bind_eval(m);
    bind_claims(m);
    bind_records(m);
    bind_dedup(m);
}
