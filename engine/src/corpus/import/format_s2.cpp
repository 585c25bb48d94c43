// The Semantic Scholar datasets (docs/formats.md), one JSON object per line, in three kinds of
// files that share the key "corpusid":
//   papers:     {"corpusid", "externalids": {"DOI", "ArXiv", "PubMed", "PubMedCentral", ...},
//                "title", "venue", "year", "publicationdate", "citationcount",
//                "s2fieldsofstudy": [{"category", "source"}], "journal": {"name"}, ...}
//   abstracts:  {"corpusid", "abstract", "openaccessinfo": {...}}
//   embeddings: {"corpusid", "model", "vector": "[0.1, -0.2, ...]"}  (the vector a JSON string)
//   citations:  {"citingcorpusid", "citedcorpusid", "isinfluential", "contexts", "intents"}
//               (corpus/citations/s2_citations.hpp)
// A record's kind is told by its keys: "citingcorpusid" makes a citation, "vector" an embedding, "abstract" without
// "title" an abstract, anything else a paper. Camel-case keys of the API ("corpusId",
// "externalIds", "publicationDate", "citationCount", "s2FieldsOfStudy") are read too.
#include "corpus/import/record_fields.hpp"
#include "corpus/citations/s2_citations.hpp"
#include "novelty/corpus/corpus.hpp"
#include "io/jsonl.hpp"
#include "util/message_text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace novelty::import_detail {

namespace {

// The external id `key` of an "externalids" object as a string ("" when absent or null).
std::string external_id(const nlohmann::json& ids, const char* key, RecordFields& fields) {
    auto it = ids.find(key);
    if (it == ids.end() || it->is_null()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer() || it->is_number_unsigned()) return it->dump();
    fields.fail(std::string("'externalids.") + key + "' must be a string or an integer, found " + json_type_words(*it));
}

void add_external_aliases(Paper& paper, const nlohmann::json& ids, RecordFields& fields) {
    if (!ids.is_object()) fields.fail("'externalids' must be an object, found " + json_type_words(ids));
    add_aliases(paper, AliasKind::doi, external_id(ids, "DOI", fields));
    add_aliases(paper, AliasKind::arxiv, external_id(ids, "ArXiv", fields));
    add_aliases(paper, AliasKind::pmid, external_id(ids, "PubMed", fields));
    add_aliases(paper, AliasKind::pmc, external_id(ids, "PubMedCentral", fields));
}

// The first category of "s2fieldsofstudy" (all of them stay in extra_json).
std::string first_field_of_study(const nlohmann::json& record) {
    for (const char* key : {"s2fieldsofstudy", "s2FieldsOfStudy"}) {
        auto it = record.find(key);
        if (it == record.end() || !it->is_array()) continue;
        for (const auto& entry : *it)
            if (entry.is_object() && entry.contains("category") && entry["category"].is_string())
                return entry["category"].get<std::string>();
    }
    for (const char* key : {"fieldsofstudy", "fieldsOfStudy"}) {
        auto it = record.find(key);
        if (it != record.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) return (*it)[0].get<std::string>();
    }
    return {};
}

}  // namespace

S2Kind s2_record_kind(const nlohmann::json& record) {
    if (citations_detail::is_s2_citation(record)) return S2Kind::citation;
    if (record.contains("vector")) return S2Kind::vector;
    if (record.contains("abstract") && !record.contains("title")) return S2Kind::abstract;
    return S2Kind::paper;
}

Paper paper_from_s2(const nlohmann::json& record, const std::string& file, std::size_t line,
                    const std::string& field_override) {
    RecordFields fields(record, file, line);
    Paper paper;
    paper.id = fields.id({"corpusid", "corpusId"});
    add_aliases(paper, AliasKind::corpusid, paper.id);
    if (const nlohmann::json* ids = fields.find({"externalids", "externalIds"})) {
        add_external_aliases(paper, *ids, fields);
        fields.keep(record.contains("externalids") ? "externalids" : "externalIds");
    }
    paper.title = fields.text({"title"});
    paper.abstract = fields.text({"abstract"});
    auto date = fields.date({"publicationdate", "publicationDate"});
    auto year = fields.integer({"year"});
    paper.venue = fields.text({"venue"});
    if (paper.venue.empty()) {
        auto journal = record.find("journal");
        if (journal != record.end() && journal->is_object() && journal->contains("name") && (*journal)["name"].is_string())
            paper.venue = (*journal)["name"].get<std::string>();
    }
    paper.field = first_field_of_study(record);  // the lists stay in extra_json
    // The datasets give a number; a string (even of digits) means a file of another shape: refused.
    paper.citations = fields.integer({"citationcount", "citationCount"}, RecordFields::Strings::refused);
    finish_paper(paper, date, year, fields, field_override, TextRule::may_come_later);
    return paper;
}

S2Abstract s2_abstract(const nlohmann::json& record, const std::string& file, std::size_t line) {
    RecordFields fields(record, file, line);
    S2Abstract out;
    out.corpusid = fields.id({"corpusid", "corpusId"});
    out.abstract = fields.text({"abstract"});
    check_stored_text(out.abstract, "the abstract", file, line);
    return out;
}

void s2_vector(const nlohmann::json& record, const std::string& file, std::size_t line, S2Vector& out) {
    RecordFields fields(record, file, line);
    out.corpusid = fields.id({"corpusid", "corpusId"});
    out.model = fields.text({"model"});
    if (out.model.empty()) fields.fail("missing 'model': every embedding line names the model that made it");
    out.values.clear();
    const nlohmann::json& vector = record.at("vector");
    if (vector.is_array()) {
        for (const auto& v : vector) {
            if (!v.is_number()) fields.fail("'vector' must hold numbers only, found " + json_type_words(v));
            out.values.push_back(v.get<float>());
        }
    } else if (vector.is_string()) {
        const std::string& text = vector.get_ref<const std::string&>();
        const char* p = text.c_str();
        while (*p == ' ') ++p;
        if (*p != '[') fields.fail("'vector' must be a JSON list of numbers in a string, as \"[0.1, -0.2]\"");
        ++p;
        for (;;) {
            while (*p == ' ') ++p;
            if (*p == ']' && out.values.empty()) { ++p; break; }
            char* end = nullptr;
            errno = 0;
            const float v = std::strtof(p, &end);
            if (end == p) fields.fail("'vector': element " + std::to_string(out.values.size()) + " is not a number");
            out.values.push_back(v);
            p = end;
            while (*p == ' ') ++p;
            if (*p == ',') { ++p; continue; }
            if (*p == ']') { ++p; break; }
            fields.fail("'vector': expected ',' or ']' after element " + std::to_string(out.values.size() - 1));
        }
        while (*p == ' ') ++p;
        if (*p != '\0') fields.fail("'vector': unexpected text after the closing ']'");
    } else {
        fields.fail("'vector' must be a string holding a JSON list, or a list, found " + json_type_words(vector));
    }
    if (out.values.empty()) fields.fail("'vector' is empty");
    for (std::size_t i = 0; i < out.values.size(); ++i)
        if (!std::isfinite(out.values[i])) fields.fail("'vector': element " + std::to_string(i) + " is not finite");
}

}  // namespace novelty::import_detail
