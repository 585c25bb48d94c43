// The citation graph (the corpus's, corpus/citations/citation_graph.hpp) and the authors (the
// S2Catalogue, s2_catalogue.hpp) of the Semantic Scholar-compatible API.
#include "server/s2/s2_common.hpp"
#include "server/s2/s2_error.hpp"
#include "server/s2/s2_handlers.hpp"

#include <algorithm>

namespace novelty::host::s2 {

namespace {

using nlohmann::ordered_json;

constexpr std::size_t max_list = 1000;
constexpr std::size_t max_author_batch = 1000;
const char* const edge_names[] = {"contexts", "intents", "contextsWithIntent", "isInfluential"};

bool is_edge_field(const std::string& f) {
    return std::any_of(std::begin(edge_names), std::end(edge_names), [&](const char* e) { return f == e; });
}

/// The edge fields and the paper's own selection of an edge-scoped `fields`.
struct EdgeFields {
    std::vector<std::string> edge;
    FieldSelection paper;
};

EdgeFields edge_fields(const Params& params) {
    const FieldSelection all = parse_fields(param(params, "fields"), "title", FieldScope::edge);
    EdgeFields out;
    out.paper.nested = all.nested;
    for (const std::string& f : all.fields) (is_edge_field(f) ? out.edge : out.paper.fields).push_back(f);
    return out;
}

/// The corpus papers' rows within `publicationDateOrYear` (all of them when absent).
std::vector<std::size_t> within_dates(S2Corpus& corpus, std::vector<std::size_t> rows, const Params& params) {
    const auto value = param(params, "publicationDateOrYear");
    if (!value) return rows;
    const DateRange range = date_range(*value);
    std::vector<std::size_t> kept;
    for (const std::size_t row : rows)
        if (in_range(corpus.text_index().meta(row).sort_date, range)) kept.push_back(row);
    return kept;
}

/// The edges whose corpus paper lies within `publicationDateOrYear` (all of them when absent).
std::vector<CitationEdge> within_dates(S2Corpus& corpus, std::vector<CitationEdge> edges, const Params& params) {
    const auto value = param(params, "publicationDateOrYear");
    if (!value) return edges;
    const DateRange range = date_range(*value);
    std::vector<CitationEdge> kept;
    for (CitationEdge& e : edges)
        if (e.row && in_range(corpus.text_index().meta(*e.row).sort_date, range)) kept.push_back(std::move(e));
    return kept;
}

/// The intents of a dataset edge as a list per context (the dataset's list of lists; a flat list
/// is every context's) and flat (each intent once, in order of appearance).
struct Intents {
    std::vector<ordered_json> per_context;
    ordered_json flat = ordered_json::array();
};

Intents intents_of(const CitationEdge& e, std::size_t n_contexts) {
    Intents out;
    const ordered_json given = e.intents ? ordered_json::parse(*e.intents, nullptr, false) : ordered_json::array();
    const auto add_flat = [&](const ordered_json& v) {
        if (v.is_string() && std::find(out.flat.begin(), out.flat.end(), v) == out.flat.end()) out.flat.push_back(v);
    };
    const bool nested = given.is_array() && std::any_of(given.begin(), given.end(), [](const ordered_json& v) { return !v.is_string(); });
    for (std::size_t i = 0; i < n_contexts; ++i) {
        ordered_json mine = ordered_json::array();
        if (nested && i < given.size() && given[i].is_array()) mine = given[i];
        else if (!nested && given.is_array()) mine = given;
        out.per_context.push_back(std::move(mine));
    }
    for (const ordered_json& v : given) {
        if (v.is_array()) for (const ordered_json& w : v) add_flat(w);
        else add_flat(v);
    }
    return out;
}

/// One citation or reference: the edge fields (from the S2 citations dataset where it gave them;
/// else [] or null, as the API answers what it does not know), then the paper.
ordered_json edge_json(const EdgeFields& fields, const CitationEdge& e, const char* side, ordered_json paper) {
    ordered_json out = ordered_json::object();
    const ordered_json contexts = e.contexts ? ordered_json::parse(*e.contexts, nullptr, false) : ordered_json::array();
    const Intents intents = intents_of(e, contexts.is_array() ? contexts.size() : 0);
    for (const std::string& f : fields.edge) {
        if (f == "isInfluential") {
            out[f] = e.influential ? ordered_json(*e.influential) : ordered_json(nullptr);
        } else if (f == "contexts") {
            out[f] = contexts.is_array() ? contexts : ordered_json::array();
        } else if (f == "intents") {
            out[f] = intents.flat;
        } else {  // contextsWithIntent
            ordered_json list = ordered_json::array();
            for (std::size_t i = 0; i < intents.per_context.size(); ++i)
                list.push_back({{"context", contexts[i]}, {"intents", intents.per_context[i]}});
            out[f] = std::move(list);
        }
    }
    out[side] = std::move(paper);
    return out;
}

FieldSelection author_fields(const Params& params) {
    return parse_fields(param(params, "fields"), "name", FieldScope::author);
}

Author author_of(const CatalogueAuthor& a) { return Author{a.name, a.id}; }

}  // namespace

Reply paper_citations(S2Corpus& corpus, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields", "offset", "limit", "publicationDateOrYear"});
    const EdgeFields fields = edge_fields(params);
    const Page page = page_of(params, 100, max_list, 9999999);
    const std::size_t row = row_or_404(corpus, id);
    const std::vector<CitationEdge> edges = within_dates(corpus, corpus.graph().citations(row), params);
    const PaperContext context = context_of(corpus);
    return paged(edges.size(), page, false, [&](std::size_t begin, std::size_t end) {
        ordered_json data = ordered_json::array();
        std::vector<std::int64_t> at;
        for (std::size_t i = begin; i < end; ++i) at.push_back(static_cast<std::int64_t>(*edges[i].row));
        const std::vector<Paper> papers = corpus.engine().papers(at);
        for (std::size_t i = begin; i < end; ++i)
            data.push_back(edge_json(fields, edges[i], "citingPaper", paper_json(papers.at(i - begin), fields.paper, context)));
        return data;
    });
}

Reply paper_references(S2Corpus& corpus, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields", "offset", "limit"});
    const EdgeFields fields = edge_fields(params);
    const Page page = page_of(params, 100, max_list, 9999999);
    const std::size_t row = row_or_404(corpus, id);
    const std::vector<CitationEdge> refs = corpus.graph().references(row);
    const PaperContext context = context_of(corpus);
    return paged(refs.size(), page, false, [&](std::size_t begin, std::size_t end) {
        ordered_json data = ordered_json::array();
        for (std::size_t i = begin; i < end; ++i) {
            const CitationEdge& w = refs[i];
            ordered_json paper = w.row ? paper_json(corpus.engine().papers({static_cast<std::int64_t>(*w.row)}).at(0),
                                                    fields.paper, context)
                                       : outside_paper_json(w, fields.paper);
            data.push_back(edge_json(fields, w, "citedPaper", std::move(paper)));
        }
        return data;
    });
}

Reply paper_authors(S2Corpus& corpus, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields", "offset", "limit"});
    const FieldSelection fields = author_fields(params);
    const Page page = page_of(params, 100, max_list, 9999999);
    const std::vector<Author>& authors = corpus.catalogue().authors(row_or_404(corpus, id));
    const PaperContext context = context_of(corpus);
    return paged(authors.size(), page, false, [&](std::size_t begin, std::size_t end) {
        ordered_json data = ordered_json::array();
        for (std::size_t i = begin; i < end; ++i) data.push_back(author_json(authors[i], fields, context));
        return data;
    });
}

Reply author_search(S2Corpus& corpus, const Params& params) {
    refuse_unknown(params, {"query", "fields", "offset", "limit"});
    const std::string query = required_query(params);
    const FieldSelection fields = author_fields(params);
    const Page page = page_of(params, 100, max_list, 9999);
    const std::vector<const CatalogueAuthor*> found = corpus.catalogue().search_authors(query);
    const PaperContext context = context_of(corpus);
    return paged(found.size(), page, true, [&](std::size_t begin, std::size_t end) {
        ordered_json data = ordered_json::array();
        for (std::size_t i = begin; i < end; ++i) data.push_back(author_json(author_of(*found[i]), fields, context));
        return data;
    });
}

Reply author_details(S2Corpus& corpus, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields"});
    const FieldSelection fields = author_fields(params);
    const CatalogueAuthor* a = corpus.catalogue().author(id);
    if (!a) throw S2Error(404, "Author with id " + clip_for_message(id) + " not found");
    return author_json(author_of(*a), fields, context_of(corpus));
}

Reply author_papers(S2Corpus& corpus, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields", "offset", "limit", "publicationDateOrYear"});
    const FieldSelection fields = parse_fields(param(params, "fields"), "title", FieldScope::paper);
    const Page page = page_of(params, 100, max_list, 9999999);
    const CatalogueAuthor* a = corpus.catalogue().author(id);
    if (!a) throw S2Error(404, "Author with id " + clip_for_message(id) + " not found");
    const std::vector<std::size_t> rows = within_dates(corpus, a->rows, params);
    return paged(rows.size(), page, false, [&](std::size_t begin, std::size_t end) {
        return papers_json(corpus, std::vector<std::int64_t>(rows.begin() + begin, rows.begin() + end), fields);
    });
}

Reply author_batch(S2Corpus& corpus, const std::string& body, const Params& params) {
    refuse_unknown(params, {"fields"});
    const FieldSelection fields = author_fields(params);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("ids") || !j["ids"].is_array())
        throw S2Error(400, "The body must be a JSON object {\"ids\": [author ids]}");
    if (j["ids"].size() > max_author_batch)
        throw S2Error(400, "Cannot process more than 1000 author ids at a time (" + std::to_string(j["ids"].size()) + " given)");
    const PaperContext context = context_of(corpus);
    ordered_json out = ordered_json::array();
    for (const auto& id : j["ids"]) {
        if (!id.is_string()) throw S2Error(400, "Author ids must be strings, found " + id.dump());
        const CatalogueAuthor* a = corpus.catalogue().author(id.get<std::string>());
        out.push_back(a ? author_json(author_of(*a), fields, context) : ordered_json(nullptr));
    }
    return out;
}

}  // namespace novelty::host::s2
