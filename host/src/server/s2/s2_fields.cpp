#include "server/s2/s2_fields.hpp"

#include "server/s2/s2_error.hpp"
#include "server/s2/s2_metadata.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace novelty::host::s2 {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

/// The fields filled from the corpus (docs/api.md).
constexpr std::array<const char*, 16> filled = {
    "paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue", "year", "publicationDate", "authors",
    "citationCount", "fieldsOfStudy", "s2FieldsOfStudy", "citationStyles", "embedding", "matchScore"};
/// Fields of the API answered from the record's own key of that name (any case) when it has
/// one, else null: the corpus holds them only for records that carried them.
constexpr std::array<const char*, 8> passed_through = {"referenceCount", "influentialCitationCount", "isOpenAccess",
                                                       "openAccessPdf",  "publicationTypes",         "publicationVenue",
                                                       "journal",        "tldr"};

bool listed(const auto& names, const std::string& name) {
    return std::find_if(names.begin(), names.end(), [&](const char* n) { return name == n; }) != names.end();
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// A requested name as the field it selects, or "" when it selects none this API serves.
std::string field_of(const std::string& name, const std::string& embedder) {
    if (name == "authors.name" || name == "authors.authorId") return "authors";
    if (name.rfind("embedding.", 0) == 0) return !embedder.empty() && name.substr(10) == embedder ? "embedding" : "";
    if (name == "matchScore") return "";  // answered by /paper/search/match only, never asked for
    if (listed(filled, name) || listed(passed_through, name)) return name;
    return "";
}

ordered_json text_or_null(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json as_ordered(const json* v) { return v ? ordered_json::parse(v->dump()) : ordered_json(nullptr); }

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

ordered_json authors_json(const std::vector<Author>& authors) {
    ordered_json out = ordered_json::array();
    for (const Author& a : authors)
        out.push_back({{"authorId", text_or_null(a.author_id)}, {"name", a.name}});
    return out;
}

ordered_json embedding_json(const Paper& paper, const PaperContext& context) {
    ordered_json vector = ordered_json::array();
    for (const float x : context.vector(paper.row)) vector.push_back(x);
    return {{"model", text_or_null(context.embedder)}, {"vector", std::move(vector)}};
}

}  // namespace

std::vector<std::string> parse_fields(const std::optional<std::string>& param, const std::vector<std::string>& defaults,
                                      const std::string& embedder) {
    if (!param || param->empty()) return defaults;
    std::vector<std::string> fields, unknown;
    std::size_t start = 0;
    while (start <= param->size()) {
        const std::size_t comma = std::min(param->find(',', start), param->size());
        std::string name = param->substr(start, comma - start);
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        start = comma + 1;
        if (name.empty()) continue;
        const std::string field = field_of(name, embedder);
        if (field.empty()) unknown.push_back(name);
        else if (field != "paperId" && std::find(fields.begin(), fields.end(), field) == fields.end()) fields.push_back(field);
    }
    if (!unknown.empty()) {
        std::string list;
        for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + clip_for_message(u);
        throw S2Error(400, "Unrecognized or unsupported fields: [" + list + "]");
    }
    return fields;
}

nlohmann::ordered_json paper_json(const Paper& paper, const std::vector<std::string>& fields,
                                  const PaperContext& context) {
    const json extra = json::parse(paper.extra_json, nullptr, false);
    const ordered_json ids = external_ids(paper, extra, context.format);
    const std::vector<Author> authors = authors_of(extra);
    ordered_json out{{"paperId", paper.id}};
    for (const std::string& f : fields) {
        if (f == "corpusId") out[f] = ids.contains("CorpusId") && ids["CorpusId"].is_number() ? ids["CorpusId"] : ordered_json(nullptr);
        else if (f == "externalIds") out[f] = ids.empty() ? ordered_json(nullptr) : ids;
        else if (f == "url") out[f] = text_or_null(url_of(extra, ids));
        else if (f == "title") out[f] = text_or_null(paper.title);
        else if (f == "abstract") out[f] = text_or_null(paper.abstract);
        else if (f == "venue") out[f] = text_or_null(paper.venue);
        else if (f == "year") out[f] = paper.year ? ordered_json(*paper.year) : ordered_json(nullptr);
        else if (f == "publicationDate") out[f] = paper.date.size() == 10 ? ordered_json(paper.date) : ordered_json(nullptr);
        else if (f == "authors") out[f] = authors_json(authors);
        else if (f == "citationCount") out[f] = paper.citations ? ordered_json(*paper.citations) : ordered_json(nullptr);
        else if (f == "fieldsOfStudy") out[f] = fields_of_study(paper, extra);
        else if (f == "s2FieldsOfStudy") out[f] = s2_fields_of_study(paper, extra);
        else if (f == "citationStyles") out[f] = {{"bibtex", bibtex(paper, authors, ids, extra)}};
        else if (f == "embedding") out[f] = embedding_json(paper, context);
        else out[f] = as_ordered(extra_key(extra, f));
    }
    return out;
}

}  // namespace novelty::host::s2
