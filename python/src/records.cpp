// novelty._core.Resolved: ideas and queries from Python resolved by the request layer
// (novelty/request/resolver.hpp), as the CLI resolves a file and the server a request body.
// Dicts reach it as JSON text (record_from_json reads them); arrays as their row count, their
// vectors handed to the search itself so that they are read in place.
#include "bindings.hpp"

#include "io/json/json_parse.hpp"
#include "novelty/request/resolver.hpp"
#include "novelty/util/error.hpp"
#include "request/json/record_json.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>

namespace novelty::python {

namespace {

std::optional<PartialDate> cutoff_of(const std::optional<std::string>& text, const std::string& parameter) {
    if (!text || text->empty()) return std::nullopt;
    return parse_cutoff(*text, parameter);
}

ResolveOptions run_options(const std::optional<std::string>& cutoff, std::vector<std::string> exclude,
                           const std::optional<std::string>& filter_json, bool vectors, bool texts) {
    ResolveOptions options;
    options.cutoff = cutoff_of(cutoff, "cutoff");
    options.exclude = std::move(exclude);
    if (filter_json) {
        nlohmann::json filter;
        try {
            filter = parse_json(*filter_json);
        } catch (const JsonError& e) {
            throw UsageError(std::string("filter: ") + e.what(), "filter");
        }
        options.filter = filter_from_json(filter, "filter");
    }
    options.vectors = vectors;
    options.texts = texts;
    return options;
}

ResolvedHandle* resolve_records(const CorpusHandle& h, const std::string& records_json, const std::string& key,
                                const std::optional<std::string>& cutoff, std::vector<std::string> exclude,
                                const std::optional<std::string>& filter_json, bool vectors, bool texts) {
    ResolveOptions options = run_options(cutoff, std::move(exclude), filter_json, vectors, texts);
    nlohmann::json list;
    try {
        list = parse_json(records_json);
    } catch (const JsonError& e) {
        throw UsageError(key + ": " + e.what(), key);
    }
    if (!list.is_array()) throw UsageError(key + ": expected a list of dicts, found " + json_type_words(list), key);
    RecordOrigin origin;
    origin.key = key;
    RecordBatch batch = records_from_json(list, RecordJsonRules{}, std::move(origin));
    auto handle = std::make_unique<ResolvedHandle>();
    handle->corpus = h.corpus;
    handle->batch = with_lock(*h.lock, [&] { return RequestResolver(*h.corpus, std::move(options)).resolve(std::move(batch)); });
    return handle.release();
}

/// `n` rows of an array: ids "0".."n-1" (never a corpus paper), each with its own cutoff and
/// exclusions when given (one entry per row, or none), no vectors (the search reads the array).
ResolvedHandle* resolve_rows(const CorpusHandle& h, std::size_t n, const std::vector<std::optional<std::string>>& cutoffs,
                             const std::vector<std::vector<std::string>>& excludes, std::vector<std::string> exclude,
                             const std::optional<std::string>& filter_json) {
    if ((!cutoffs.empty() && cutoffs.size() != n) || (!excludes.empty() && excludes.size() != n))
        throw UsageError("cutoffs and exclude need one entry per query (" + std::to_string(n) + ")", "cutoffs");
    std::vector<std::string> ids;
    std::vector<std::optional<PartialDate>> dates;
    for (std::size_t i = 0; i < n; ++i) {
        ids.push_back(std::to_string(i));
        if (!cutoffs.empty()) dates.push_back(cutoff_of(cutoffs[i], "cutoffs"));
    }
    RecordOrigin origin;
    origin.key = "queries";
    RecordBatch batch = record_batch(ids, dates, excludes, nullptr, 0, false, std::move(origin));
    ResolveOptions options = run_options(std::nullopt, std::move(exclude), filter_json, false, false);
    auto handle = std::make_unique<ResolvedHandle>();
    handle->corpus = h.corpus;
    handle->batch = with_lock(*h.lock, [&] { return RequestResolver(*h.corpus, std::move(options)).resolve(std::move(batch)); });
    return handle.release();
}

/// Embeds the records still to embed with `embed` (a Python callable: list of texts -> float32
/// array), 64 texts a call, as the CLI does.
void embed_resolved(ResolvedHandle& h, nb::callable embed, const std::string& encoder, const std::string& precision) {
    const EmbedTexts call = [&embed](const std::vector<std::string>& texts) {
        nb::list items;
        for (const auto& t : texts) items.append(nb::str(t.c_str(), t.size()));
        const auto values = nb::cast<nb::ndarray<const float, nb::c_contig, nb::device::cpu>>(embed(items));
        return std::vector<float>(values.data(), values.data() + values.size());
    };
    embed_pending(h.batch, call, EmbedSettings{encoder, 64, {}, precision});
}

}  // namespace

SearchQueries resolved_queries(const ResolvedHandle& r, const QueryMatrix* given) {
    SearchQueries q = r.batch.queries();
    if (given) {
        if (given->n != r.batch.size())
            throw UsageError("the vectors have " + std::to_string(given->n) + " rows for " + std::to_string(r.batch.size()) +
                                 " queries", "vectors");
        q.vectors = given->data;
        q.n_queries = given->n;
        q.dim = given->dim;
    } else if (!r.batch.to_embed.empty()) {
        throw UsageError("the records' texts were not embedded yet");
    }
    return q;
}

void bind_records(nb::module_& m) {
    nb::class_<ResolvedHandle>(m, "Resolved", "Ideas or queries resolved by the request layer against a corpus.")
        .def_prop_ro("ids", [](const ResolvedHandle& r) {
            std::vector<std::string> ids;
            for (const auto& record : r.batch.records) ids.push_back(record.id);
            return ids;
        })
        .def_prop_ro("texts", [](const ResolvedHandle& r) { return r.batch.texts; })
        .def_prop_ro("cutoffs", [](const ResolvedHandle& r) {
            std::vector<std::string> cutoffs;
            for (const auto& scope : r.batch.scopes) cutoffs.push_back(scope.cutoff);
            return cutoffs;
        })
        .def_prop_ro("row_limit", [](const ResolvedHandle& r) {
            std::vector<std::size_t> limits;
            for (const auto& scope : r.batch.scopes) limits.push_back(scope.row_limit);
            return limits;
        })
        .def_prop_ro("unknown_excluded", [](const ResolvedHandle& r) {
            std::vector<std::size_t> unknown;
            for (const auto& scope : r.batch.scopes) unknown.push_back(scope.unknown_excluded);
            return unknown;
        })
        .def_prop_ro("n_to_embed", [](const ResolvedHandle& r) { return r.batch.to_embed.size(); })
        .def_prop_ro("filtered", [](const ResolvedHandle& r) { return !r.batch.filters.empty(); })
        .def("embed", &embed_resolved, nb::arg("embed"), nb::arg("encoder"), nb::arg("precision") = "",
             "Embeds the records whose vector is their text with embed(texts) -> float32 array, 64 at a time; "
             "precision: the encoder's (recorded in score provenance as ideas_embedder_precision), \"\" for none.")
        .def("__len__", [](const ResolvedHandle& r) { return r.batch.size(); });
    m.def("resolve_records", &resolve_records, nb::arg("corpus"), nb::arg("records_json"), nb::arg("key"),
          nb::arg("cutoff").none(), nb::arg("exclude"), nb::arg("filter_json").none(), nb::arg("vectors"), nb::arg("texts"),
          "Records given as a JSON array of objects, resolved as the CLI resolves a query file (problems name key[i]).");
    m.def("resolve_rows", &resolve_rows, nb::arg("corpus"), nb::arg("n"), nb::arg("cutoffs"), nb::arg("excludes"),
          nb::arg("exclude"), nb::arg("filter_json").none(),
          "The scopes of n array rows (ids '0'..'n-1'), each with its own cutoff and exclusions when given.");
}

}  // namespace novelty::python
