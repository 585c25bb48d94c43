// OpenAlex works: {"id": "https://openalex.org/W...", "title"|"display_name",
// "abstract_inverted_index": {word: [positions]}, "publication_date", "publication_year",
// "primary_location": {"source": {"display_name"}}, "cited_by_count", "primary_topic":
// {"field": {"display_name"}}, "concepts": [{"display_name", "level"}], ...}. Flattened
// exports that carry "openalex", "abstract", "date", "year", "venue" and string "concepts" (as
// in the SYNERGY datasets) are read too. The id keeps only the work key ("W2125158795").
#include "corpus/import/record_fields.hpp"
#include "util/message_text.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace novelty::import_detail {

namespace {

std::string rebuild_abstract(const nlohmann::json& index, RecordFields& fields) {
    if (!index.is_object()) fields.fail("'abstract_inverted_index' must be an object of word -> positions");
    std::vector<std::pair<std::int64_t, const std::string*>> words;
    for (auto it = index.begin(); it != index.end(); ++it) {
        if (!it->is_array()) fields.fail("'abstract_inverted_index': positions of " + quote_value(it.key()) + " must be an array");
        for (const auto& position : *it) {
            if (!position.is_number_integer() || position.get<std::int64_t>() < 0)
                fields.fail("'abstract_inverted_index': positions of " + quote_value(it.key()) + " must be non-negative integers");
            words.emplace_back(position.get<std::int64_t>(), &it.key());
        }
    }
    std::sort(words.begin(), words.end(),
              [](const auto& a, const auto& b) { return a.first < b.first || (a.first == b.first && *a.second < *b.second); });
    std::string text;
    for (const auto& [position, word] : words) {
        if (!text.empty()) text += ' ';
        text += *word;
    }
    return text;
}

std::string nested_name(const nlohmann::json& record, std::initializer_list<const char*> path) {
    const nlohmann::json* node = &record;
    for (const char* key : path) {
        if (!node->is_object()) return {};
        auto it = node->find(key);
        if (it == node->end() || it->is_null()) return {};
        node = &*it;
    }
    return node->is_string() ? node->get<std::string>() : std::string();
}

std::string field_of(const nlohmann::json& record) {
    std::string field = nested_name(record, {"primary_topic", "field", "display_name"});
    if (!field.empty()) return field;
    auto concepts = record.find("concepts");
    if (concepts == record.end() || !concepts->is_array() || concepts->empty()) return {};
    for (const auto& concept_entry : *concepts)
        if (concept_entry.is_object() && concept_entry.value("level", -1) == 0 && concept_entry.contains("display_name") &&
            concept_entry["display_name"].is_string())
            return concept_entry["display_name"].get<std::string>();
    const auto& first = (*concepts)[0];
    if (first.is_string()) return first.get<std::string>();
    return {};
}

}  // namespace

Paper paper_from_openalex(const nlohmann::json& record, const std::string& file, std::size_t line,
                          const std::string& field_override) {
    RecordFields fields(record, file, line);
    Paper paper;
    paper.id = fields.id({"id", "openalex"});
    if (auto slash = paper.id.rfind('/'); slash != std::string::npos && paper.id.find("openalex.org") != std::string::npos)
        paper.id = paper.id.substr(slash + 1);
    paper.title = fields.text({"title", "display_name"});
    if (const nlohmann::json* index = fields.find({"abstract_inverted_index"})) {
        paper.abstract = rebuild_abstract(*index, fields);
        fields.use({"abstract"});
    } else {
        paper.abstract = fields.text({"abstract"});
    }
    auto date = fields.date({"publication_date", "date"});
    auto year = fields.integer({"publication_year", "year"});
    paper.venue = nested_name(record, {"primary_location", "source", "display_name"});
    if (paper.venue.empty()) paper.venue = nested_name(record, {"host_venue", "display_name"});
    if (paper.venue.empty()) paper.venue = fields.text({"venue"});
    else fields.use({"venue"});
    paper.field = field_of(record);  // concepts and primary_topic stay in extra_json
    paper.citations = fields.integer({"cited_by_count", "citations"});
    finish_paper(paper, date, year, fields, field_override);
    return paper;
}

}  // namespace novelty::import_detail
