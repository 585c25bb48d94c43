// novelty._core.resolve_scopes: each record's cutoff, exclusions and own paper resolved by the
// request layer's ScopeResolver (novelty/request/scope.hpp), as the CLI and the server resolve them.
#include "bindings.hpp"

#include "novelty/io/query_records.hpp"
#include "novelty/request/scope.hpp"
#include "novelty/util/error.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace novelty::python {

namespace {

struct Scopes {
    std::vector<std::size_t> row_limit;
    std::vector<std::string> cutoff;
    std::vector<std::vector<std::int64_t>> excluded_rows;
    std::vector<std::vector<std::string>> excluded_ids;
    std::vector<std::size_t> unknown_excluded;
};

Scopes resolve_all(const Corpus& corpus, const std::vector<std::string>& ids,
                   const std::vector<std::optional<PartialDate>>& dates,
                   const std::vector<std::vector<std::string>>& excludes, const std::optional<PartialDate>& cutoff,
                   const std::vector<std::string>& run_exclude, bool own_paper) {
    ScopeResolver resolver(corpus, cutoff, run_exclude);
    Scopes out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        RecordScope scope = resolver.resolve(ids[i], dates[i], excludes[i], own_paper);
        out.row_limit.push_back(scope.row_limit);
        out.cutoff.push_back(std::move(scope.cutoff));
        out.excluded_rows.push_back(std::move(scope.excluded_rows));
        out.excluded_ids.push_back(std::move(scope.excluded_ids));
        out.unknown_excluded.push_back(scope.unknown_excluded);
    }
    return out;
}

using ScopeLists = std::tuple<std::vector<std::size_t>, std::vector<std::string>, std::vector<std::vector<std::int64_t>>,
                              std::vector<std::vector<std::string>>, std::vector<std::size_t>>;

ScopeLists resolve_scopes(const CorpusHandle& h, const std::vector<std::string>& ids,
                          const std::vector<std::optional<std::string>>& dates,
                          const std::vector<std::vector<std::string>>& excludes, const std::optional<std::string>& cutoff,
                          const std::vector<std::string>& run_exclude, bool own_paper) {
    if (dates.size() != ids.size() || excludes.size() != ids.size())
        throw UsageError("ids, dates and exclusions must have one entry per record", "records");
    std::vector<std::optional<PartialDate>> parsed;
    for (const auto& date : dates)
        parsed.push_back(date ? std::optional<PartialDate>(parse_cutoff(*date, "date")) : std::nullopt);
    const std::optional<PartialDate> default_cutoff =
        cutoff ? std::optional<PartialDate>(parse_cutoff(*cutoff, "cutoff")) : std::nullopt;
    Scopes s = with_lock(*h.lock, [&] {
        return resolve_all(*h.corpus, ids, parsed, excludes, default_cutoff, run_exclude, own_paper);
    });
    return {std::move(s.row_limit), std::move(s.cutoff), std::move(s.excluded_rows), std::move(s.excluded_ids),
            std::move(s.unknown_excluded)};
}

}  // namespace

void bind_scope(nb::module_& m) {
    m.def("resolve_scopes", &resolve_scopes, nb::arg("corpus"), nb::arg("ids"), nb::arg("dates"), nb::arg("excludes"),
          nb::arg("cutoff"), nb::arg("run_exclude"), nb::arg("own_paper"),
          "Per record (row_limit, cutoff, excluded_rows, excluded_ids, unknown_excluded), as lists: the "
          "request layer's ScopeResolver. A record's date wins over `cutoff`; with own_paper a record whose "
          "id is a corpus paper never finds it.");
}

}  // namespace novelty::python
