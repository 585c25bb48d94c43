// The paper and author objects of the Semantic Scholar-compatible API (s2_fields.hpp).
#include "server/paper_ids.hpp"
#include "server/s2/s2_fields.hpp"
#include "server/s2/s2_metadata.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host::s2 {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const FieldSelection nested_default{{"title"}, {}, ""};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

ordered_json text_or_null(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json as_ordered(const json* v) { return v ? ordered_json::parse(v->dump()) : ordered_json(nullptr); }

/// The record's key `name`, in the API's case or lower case; null when absent or null.
const json* extra_key(const json& extra, const std::string& name) {
    if (!extra.is_object()) return nullptr;
    for (const std::string& key : {name, lower(name)}) {
        auto it = extra.find(key);
        if (it != extra.end() && !it->is_null()) return &*it;
    }
    return nullptr;
}

ordered_json fields_of_study(const Paper& paper, const json& extra) {
    if (const json* f = extra_key(extra, "fieldsOfStudy"); f && f->is_array()) return as_ordered(f);
    ordered_json out = ordered_json::array();
    if (const json* s = extra_key(extra, "s2FieldsOfStudy"); s && s->is_array()) {
        for (const auto& entry : *s) {
            if (!entry.is_object() || !entry.contains("category") || !entry["category"].is_string()) continue;
            const std::string category = entry["category"].get<std::string>();
            if (std::find(out.begin(), out.end(), ordered_json(category)) == out.end()) out.push_back(category);
        }
    } else if (!paper.field.empty()) {
        out.push_back(paper.field);
    }
    return out.empty() ? ordered_json(nullptr) : out;
}

ordered_json s2_fields_of_study(const Paper& paper, const json& extra) {
    if (const json* s = extra_key(extra, "s2FieldsOfStudy"); s && s->is_array()) return as_ordered(s);
    if (paper.field.empty()) return nullptr;
    return ordered_json::array({{{"category", paper.field}, {"source", "corpus"}}});
}

/// "openAccessPdf" as the record gives it, else from its "openaccessinfo" (the S2 form) when it
/// names a URL; null otherwise.
ordered_json open_access_pdf(const json& extra) {
    if (const json* given = extra_key(extra, "openAccessPdf")) return as_ordered(given);
    const json* info = extra_key(extra, "openAccessInfo");
    if (!info || !info->is_object() || !info->contains("url") || !(*info)["url"].is_string()) return nullptr;
    ordered_json out{{"url", (*info)["url"]}};
    out["status"] = info->contains("status") ? as_ordered(&(*info)["status"]) : ordered_json(nullptr);
    out["license"] = info->contains("license") ? as_ordered(&(*info)["license"]) : ordered_json(nullptr);
    return out;
}

ordered_json embedding_json(const Paper& paper, const std::string& model, const PaperContext& context) {
    if (!model.empty() && model != context.embedder) return nullptr;  // a model the corpus has no vectors of
    ordered_json vector = ordered_json::array();
    for (const float x : context.corpus->engine().vector(paper.row)) vector.push_back(x);
    return {{"model", text_or_null(context.embedder)}, {"vector", std::move(vector)}};
}

ordered_json papers_at(const std::vector<std::size_t>& rows, const FieldSelection& fields, const PaperContext& context) {
    std::vector<std::int64_t> at(rows.begin(), rows.end());
    ordered_json out = ordered_json::array();
    for (const Paper& p : context.corpus->engine().papers(at)) out.push_back(paper_json(p, fields, context));
    return out;
}

FieldSelection nested_selection(const FieldSelection& fields, const std::string& head) {
    auto it = fields.nested.find(head);
    if (it == fields.nested.end() || it->second.empty()) return nested_default;
    FieldSelection sel;
    sel.fields = it->second;
    return sel;
}

ordered_json references_json(const Paper& paper, const FieldSelection& fields, const PaperContext& context) {
    const FieldSelection sel = nested_selection(fields, "references");
    ordered_json out = ordered_json::array();
    for (const CitationEdge& w : context.corpus->graph().references(paper.row))
        out.push_back(w.row ? papers_at({*w.row}, sel, context).at(0) : outside_paper_json(w, sel));
    return out;
}

ordered_json authors_json(const Paper& paper, const json& extra, const FieldSelection& fields,
                          const PaperContext& context) {
    FieldSelection sel;
    if (auto it = fields.nested.find("authors"); it != fields.nested.end()) sel.fields = it->second;
    ordered_json out = ordered_json::array();
    const std::vector<Author> authors =
        sel.fields.empty() ? authors_of(extra) : context.corpus->catalogue().authors(paper.row);
    for (const Author& a : authors) out.push_back(author_json(a, sel, context));
    return out;
}

ordered_json reference_count(const Paper& paper, const json& extra, const PaperContext& context) {
    if (const json* given = extra_key(extra, "referenceCount")) return as_ordered(given);
    const std::size_t n = context.corpus->graph().n_references(paper.row);
    return n == 0 ? ordered_json(nullptr) : ordered_json(n);
}

/// One field of the paper object.
ordered_json paper_field(const std::string& f, const Paper& paper, const json& extra, const ordered_json& ids,
                         const FieldSelection& fields, const PaperContext& context) {
    if (f == "corpusId") return ids.contains("CorpusId") && ids["CorpusId"].is_number() ? ids["CorpusId"] : ordered_json(nullptr);
    if (f == "externalIds") return ids.empty() ? ordered_json(nullptr) : ids;
    if (f == "url") return text_or_null(url_of(extra, ids));
    if (f == "title") return text_or_null(paper.title);
    if (f == "abstract") return text_or_null(paper.abstract);
    if (f == "venue") return text_or_null(paper.venue);
    if (f == "year") return paper.year ? ordered_json(*paper.year) : ordered_json(nullptr);
    if (f == "publicationDate") return paper.date.size() == 10 ? ordered_json(paper.date) : ordered_json(nullptr);
    if (f == "authors") return authors_json(paper, extra, fields, context);
    if (f == "citationCount") return paper.citations ? ordered_json(*paper.citations) : ordered_json(nullptr);
    if (f == "referenceCount") return reference_count(paper, extra, context);
    if (f == "fieldsOfStudy") return fields_of_study(paper, extra);
    if (f == "s2FieldsOfStudy") return s2_fields_of_study(paper, extra);
    if (f == "citationStyles") return {{"bibtex", bibtex(paper, authors_of(extra), ids, extra)}};
    if (f == "embedding") return embedding_json(paper, fields.embedding_model, context);
    if (f == "openAccessPdf") return open_access_pdf(extra);
    if (f == "textAvailability") return paper.abstract.empty() ? "none" : "abstract";
    if (f == "citations") {
        std::vector<std::size_t> rows;
        for (const CitationEdge& e : context.corpus->graph().citations(paper.row)) rows.push_back(*e.row);
        return papers_at(rows, nested_selection(fields, "citations"), context);
    }
    if (f == "references") return references_json(paper, fields, context);
    return as_ordered(extra_key(extra, f));  // kept by the import when the record had it, else null
}

}  // namespace

nlohmann::ordered_json paper_json(const Paper& paper, const FieldSelection& fields, const PaperContext& context) {
    const json extra = json::parse(paper.extra_json, nullptr, false);
    const ordered_json ids = external_ids(paper, extra, context.format);
    ordered_json out{{"paperId", paper.id}};
    for (const std::string& f : fields.fields) out[f] = paper_field(f, paper, extra, ids, fields, context);
    return out;
}

nlohmann::ordered_json outside_paper_json(const CitationEdge& work, const FieldSelection& fields) {
    ordered_json out{{"paperId", nullptr}};
    for (const std::string& f : fields.fields) {
        if (f == "externalIds" && !work.id_kind.empty()) out[f] = {{work.id_kind, work.id}};
        else if (f == "authors") out[f] = ordered_json::array();
        else out[f] = nullptr;
    }
    return out;
}

nlohmann::ordered_json author_json(const Author& author, const FieldSelection& fields, const PaperContext& context) {
    ordered_json out{{"authorId", text_or_null(author.author_id)}, {"name", text_or_null(author.name)}};
    const CatalogueAuthor* known = nullptr;
    const auto entry = [&]() -> const CatalogueAuthor* {
        if (!known && !author.author_id.empty()) known = context.corpus->catalogue().author(author.author_id);
        return known;
    };
    for (const std::string& f : fields.fields) {
        if (f == "name") continue;
        if (f == "affiliations") out[f] = ordered_json::array();
        else if (f == "externalIds") out[f] = ordered_json::object();
        else if (f == "url" && context.format == "s2" && !author.author_id.empty())
            out[f] = "https://www.semanticscholar.org/author/" + author.author_id;
        else if (f == "paperCount") out[f] = entry() ? ordered_json(entry()->rows.size()) : ordered_json(nullptr);
        else if (f == "citationCount") out[f] = entry() ? ordered_json(entry()->citations) : ordered_json(nullptr);
        else if (f == "hIndex") out[f] = entry() ? ordered_json(entry()->h_index) : ordered_json(nullptr);
        else if (f == "papers")
            out[f] = entry() ? papers_at(entry()->rows, nested_selection(fields, "papers"), context) : ordered_json::array();
        else out[f] = nullptr;  // url outside S2 ids, homepage: not in the corpus
    }
    return out;
}

}  // namespace novelty::host::s2
