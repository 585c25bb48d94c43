// Generic JSON Lines: {"id", "title", "abstract"|"text", "date"|"published"|"publication_date",
// "year", "field", "venue", "citations"|"citation_count"|"cited_by_count", ...}.
#include "corpus/import/record_fields.hpp"

namespace novelty::import_detail {

Paper paper_from_jsonl(const nlohmann::json& record, const std::string& file, std::size_t line,
                       const std::string& field_override) {
    RecordFields fields(record, file, line);
    Paper paper;
    paper.id = fields.id({"id"});
    paper.title = fields.text({"title"});
    paper.abstract = fields.text({"abstract", "text"});
    auto date = fields.date({"date", "published", "publication_date"});
    auto year = fields.integer({"year"});
    paper.field = fields.text({"field"});
    paper.venue = fields.text({"venue"});
    paper.citations = fields.integer({"citations", "citation_count", "cited_by_count"});
    finish_paper(paper, date, year, fields, field_override);
    return paper;
}

}  // namespace novelty::import_detail
