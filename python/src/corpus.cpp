// novelty._core.Corpus and the corpus-building functions (import, add_vectors, embed).
#include "bindings.hpp"

#include "novelty/corpus/corpus_embed.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/request/query_records.hpp"
#include "novelty/util/error.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace novelty::python {

namespace {

CorpusHandle open_corpus(const std::string& dir) {
    nb::gil_scoped_release release;
    return CorpusHandle{std::make_shared<const Corpus>(Corpus::open(dir))};
}

/// The corpus's vectors as a read-only numpy view (float32 or float16) that keeps the corpus open.
nb::object vectors_of(nb::handle self, const CorpusHandle& h) {
    const NpyMatrix& m = h.corpus->vectors();
    const nb::dlpack::dtype dtype = m.dtype() == DType::f32 ? nb::dtype<float>() : nb::dlpack::dtype{2, 16, 1};
    nb::ndarray<nb::numpy, nb::ro> view(m.data(), {m.rows(), m.cols()}, self, {}, dtype);
    return view.cast();
}

nb::dict paper_dict(const Paper& p) {
    nb::dict d;
    d["row"] = p.row;
    d["id"] = p.id;
    d["title"] = p.title;
    d["abstract"] = p.abstract;
    d["date"] = p.date.empty() ? nb::none() : nb::cast(p.date);
    d["field"] = p.field;
    d["venue"] = p.venue;
    d["citations"] = p.citations ? nb::cast(*p.citations) : nb::none();
    d["extra_json"] = p.extra_json;
    return d;
}

/// Ids of `rows` (int64, any order, -1 for an empty slot: ""), one Python list.
nb::list ids_of(const CorpusHandle& h, const std::vector<std::int64_t>& rows) {
    const PaperLabels labels = with_lock(*h.lock, [&] { return h.corpus->labels(rows, false); });
    nb::list out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::uint32_t at = labels.index_of_input[i];
        out.append(at == PaperLabels::no_row ? std::string() : labels.ids[at]);
    }
    return out;
}

nb::dict import_corpus_py(const std::vector<std::tuple<std::string, std::string, std::string>>& sources,
                          const std::string& out_dir, bool overwrite, bool skip_invalid, nb::object progress) {
    ImportOptions options;
    for (const auto& [path, format, field] : sources)
        options.sources.push_back(ImportSource{path, parse_import_format(format), field});
    options.out_dir = out_dir;
    options.overwrite = overwrite;
    options.skip_invalid = skip_invalid;
    if (ProgressFn fn = progress_callback(progress))
        options.on_progress = [fn](const ImportProgress& p) { fn(p.records, 0); };
    ImportSummary summary;
    {
        nb::gil_scoped_release release;
        summary = import_corpus(options);
    }
    nb::dict d;
    d["papers"] = summary.n_papers;
    d["skipped"] = summary.n_skipped;
    d["duplicates"] = summary.n_duplicates;
    d["dir"] = summary.out_dir;
    return d;
}

void add_vectors_py(const std::string& dir, const std::string& vectors_path, const std::string& ids_path,
                    const std::string& order, const std::string& dtype, const std::string& embedder,
                    const std::string& pooling) {
    AddVectorsOptions options;
    options.vectors_path = vectors_path;
    options.ids_path = ids_path;
    if (order != "input" && order != "corpus") throw UsageError("order must be 'input' or 'corpus', not '" + order + "'", "order");
    options.order = order == "corpus" ? VectorOrder::corpus : VectorOrder::input;
    if (dtype == "f32") options.dtype = DType::f32;
    else if (dtype == "f16") options.dtype = DType::f16;
    else if (!dtype.empty()) throw UsageError("dtype must be 'f32' or 'f16', not '" + dtype + "'", "dtype");
    options.embedder = EmbedderInfo{.name = embedder, .dim = 0, .pooling = pooling};
    nb::gil_scoped_release release;
    add_vectors(dir, options);
}

std::size_t embed_corpus_py(const std::string& dir, EmbedderHandle& e, std::size_t batch, bool resume,
                            const std::string& dtype, nb::object progress) {
    EmbedCorpusOptions options;
    options.batch = batch;
    options.resume = resume;
    if (dtype != "f32" && dtype != "f16") throw UsageError("dtype must be 'f32' or 'f16', not '" + dtype + "'", "dtype");
    options.dtype = dtype == "f16" ? DType::f16 : DType::f32;
    options.on_progress = progress_callback(progress);
    nb::gil_scoped_release release;
    std::lock_guard<CallLock> lock(e.mutex);
    return embed_corpus(dir, *e.embedder, options);
}

}  // namespace

void bind_corpus(nb::module_& m) {
    nb::class_<CorpusHandle>(m, "Corpus", "An open, read-only corpus directory.")
        .def_static("open", &open_corpus, nb::arg("dir"), "Opens a corpus directory (checks it against its manifest).")
        .def_prop_ro("dir", [](const CorpusHandle& h) { return h.corpus->dir(); })
        .def_prop_ro("size", [](const CorpusHandle& h) { return h.corpus->size(); })
        .def_prop_ro("dim", [](const CorpusHandle& h) { return h.corpus->manifest().dim; })
        .def_prop_ro("dtype", [](const CorpusHandle& h) { return h.corpus->manifest().dtype; })
        .def_prop_ro("has_vectors", [](const CorpusHandle& h) { return h.corpus->has_vectors(); })
        .def_prop_ro("embedder", [](const CorpusHandle& h) {
            const auto& e = h.corpus->manifest().embedder;
            return e ? std::optional<std::string>(e->name) : std::nullopt;
        })
        .def_prop_ro("identity", [](const CorpusHandle& h) { return with_lock(*h.lock, [&] { return h.corpus->identity(); }); })
        .def("vectors", [](nb::handle self) { return vectors_of(self, nb::cast<const CorpusHandle&>(self)); },
             "The normalised vectors, size x dim, a read-only view of vectors.npy (float32 or float16).")
        .def("paper", [](const CorpusHandle& h, std::size_t row) {
            if (row >= h.corpus->size()) throw UsageError("row " + std::to_string(row) + " is past the corpus's " + std::to_string(h.corpus->size()) + " rows", "row");
            return paper_dict(with_lock(*h.lock, [&] { return h.corpus->paper(row); }));
        }, nb::arg("row"))
        .def("find_row", [](const CorpusHandle& h, const std::string& id) {
            return with_lock(*h.lock, [&] { return h.corpus->find_row(id); });
        }, nb::arg("id"))
        .def("rows_through", [](const CorpusHandle& h, const std::string& date) {
            const PartialDate cutoff = parse_cutoff(date, "cutoff");
            return with_lock(*h.lock, [&] { return h.corpus->rows_through(cutoff); });
        }, nb::arg("date"), "Rows published on or before `date` (YYYY, YYYY-MM or YYYY-MM-DD): rows [0, result).")
        .def("ids", &ids_of, nb::arg("rows"), "The ids of the given rows (\"\" for -1).");
    m.def("import_corpus", &import_corpus_py, nb::arg("sources"), nb::arg("out_dir"), nb::arg("overwrite") = false,
          nb::arg("skip_invalid") = false, nb::arg("progress") = nb::none());
    m.def("add_vectors", &add_vectors_py, nb::arg("dir"), nb::arg("vectors_path"), nb::arg("ids_path"),
          nb::arg("order"), nb::arg("dtype"), nb::arg("embedder"), nb::arg("pooling"));
    m.def("embed_corpus", &embed_corpus_py, nb::arg("dir"), nb::arg("embedder"), nb::arg("batch") = 256,
          nb::arg("resume") = false, nb::arg("dtype") = "f32", nb::arg("progress") = nb::none());
    m.def("parse_date", [](const std::string& text, const std::string& parameter) {
        const PartialDate d = parse_cutoff(text, parameter);
        return std::make_pair(d.text(), d.effective());
    }, nb::arg("text"), nb::arg("parameter"), "Checks a date: (as given, its last day); UsageError when invalid.");
}

}  // namespace novelty::python
