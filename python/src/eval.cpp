// novelty._core.auroc: the exact AUROC (Mann-Whitney, ties counted 1/2) of `novelty eval auroc`.
#include "bindings.hpp"

#include "novelty/scoring/metrics.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace novelty::python {

void bind_eval(nb::module_& m) {
    m.def("auroc", [](const std::vector<double>& scores, const std::vector<int>& labels) {
        const Auroc a = auroc(scores, labels);
        nb::dict d;
        d["auroc"] = a.value ? nb::cast(*a.value) : nb::none();
        d["n_pos"] = a.n_pos;
        d["n_neg"] = a.n_neg;
        d["n_missing"] = a.n_missing;
        d["reason"] = a.reason;
        return d;
    }, nb::arg("scores"), nb::arg("labels"),
       "AUROC of scores (NaN = missing, left out) against labels (1 novel, 0 not): "
       "{auroc (None without both classes), n_pos, n_neg, n_missing, reason}.");
}

}  // namespace novelty::python
