#include "server/s2/s2_fields.hpp"

#include "server/paper_ids.hpp"
#include "server/s2/s2_error.hpp"
#include "server/s2/s2_metadata.hpp"
#include "server/s2/s2_params.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host::s2 {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Names = std::vector<std::string>;

/// The paper fields the Graph API documents.
const Names paper_fields{"paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue",
                         "publicationVenue", "year", "referenceCount", "citationCount", "influentialCitationCount",
                         "isOpenAccess", "openAccessPdf", "fieldsOfStudy", "s2FieldsOfStudy", "publicationTypes",
                         "publicationDate", "journal", "citationStyles", "authors", "citations", "references",
                         "embedding", "tldr", "textAvailability"};
/// The fields of a paper inside another object (citations.*, references.*, papers.*).
const Names nested_paper_fields{"paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue",
                                "publicationVenue", "year", "referenceCount", "citationCount",
                                "influentialCitationCount", "isOpenAccess", "openAccessPdf", "fieldsOfStudy",
                                "s2FieldsOfStudy", "publicationTypes", "publicationDate", "journal",
                                "citationStyles", "authors"};
const Names author_fields{"authorId", "externalIds", "url", "name", "affiliations", "homepage", "paperCount",
                          "citationCount", "hIndex", "papers"};
const Names edge_fields{"contexts", "intents", "contextsWithIntent", "isInfluential"};
const Names embedding_models{"specter_v1", "specter_v2"};

bool listed(const Names& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

void add_once(Names& names, const std::string& name) {
    if (!listed(names, name)) names.push_back(name);
}

bool top_level(FieldScope scope, const std::string& name) {
    switch (scope) {
        case FieldScope::paper: return listed(paper_fields, name);
        case FieldScope::edge:
            return listed(edge_fields, name) || (listed(paper_fields, name) && name != "citations" && name != "references");
        case FieldScope::author: return listed(author_fields, name);
    }
    return false;
}

/// The sub-fields "head.*" may name in `scope`; null when "head." selects nothing there.
const Names* sub_fields(FieldScope scope, const std::string& head) {
    static const Names author_sub(author_fields.begin(), author_fields.end() - 1);  // no "papers"
    if (scope != FieldScope::author && head == "authors") return &author_sub;
    if (scope == FieldScope::paper && (head == "citations" || head == "references")) return &nested_paper_fields;
    if (scope == FieldScope::author && head == "papers") return &nested_paper_fields;
    if (scope == FieldScope::paper && head == "embedding") return &embedding_models;
    return nullptr;
}

/// Adds one requested name to `out`; false when the scope has no such field.
bool select(FieldScope scope, const std::string& name, FieldSelection& out) {
    const std::size_t dot = name.find('.');
    if (dot == std::string::npos) {
        if (!top_level(scope, name)) return false;
        if (name != "paperId" && name != "authorId") add_once(out.fields, name);
        return true;
    }
    const std::string head = name.substr(0, dot), tail = name.substr(dot + 1);
    const Names* allowed = sub_fields(scope, head);
    if (!allowed || !listed(*allowed, tail)) return false;
    add_once(out.fields, head);
    if (head == "embedding") out.embedding_model = tail;
    else if (tail != "paperId" && tail != "authorId") add_once(out.nested[head], tail);
    else out.nested[head];  // named, with nothing beyond the id
    return true;
}

}  // namespace

FieldSelection parse_fields(const std::optional<std::string>& param, const std::string& defaults, FieldScope scope) {
    FieldSelection out;
    Names unknown;
    for (const std::string& name : comma_items(param && !param->empty() ? *param : defaults))
        if (!select(scope, name, out)) unknown.push_back(name);
    if (!unknown.empty()) {
        std::string list;
        for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + clip_for_message(u);
        throw S2Error(400, "Unrecognized or unsupported fields: [" + list + "]");
    }
    return out;
}

PaperContext context_of(S2Corpus& corpus) {
    PaperContext c;
    c.format = corpus_format(corpus.engine().corpus().manifest());
    c.embedder = corpus.engine().embedder_name();
    c.corpus = &corpus;
    return c;
}

}  // namespace novelty::host::s2
