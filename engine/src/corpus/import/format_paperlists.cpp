// Paperlists-style conference records: {"id": "venue+year:key", "venue", "year", "title",
// "abstract", "status", "track", "gs_citation" (-1 = unknown), "keywords", ...}. Only the year
// is known. Some records carry no key ("cvpr2016:None"); their id becomes the venue+year prefix
// and a hash of the title ("cvpr2016:t-3f2a9c01b7e4"), and the given id is kept as "source_id".
#include "corpus/import/record_fields.hpp"
#include "novelty/util/checksum.hpp"

namespace novelty::import_detail {

Paper paper_from_paperlists(const nlohmann::json& record, const std::string& file, std::size_t line,
                            const std::string& field_override) {
    RecordFields fields(record, file, line);
    Paper paper;
    paper.id = fields.id({"id"});
    paper.title = fields.text({"title"});
    const std::size_t colon = paper.id.rfind(':');
    const std::string key = colon == std::string::npos ? std::string() : paper.id.substr(colon + 1);
    if (colon != std::string::npos && (key.empty() || key == "None" || key == "null") && !paper.title.empty()) {
        fields.keep("id");
        fields.rename_kept("id", "source_id");
        paper.id = paper.id.substr(0, colon) + ":t-" + sha256_hex(paper.title).substr(0, 12);
    }
    paper.abstract = fields.text({"abstract"});
    auto date = fields.date({"date"});
    auto year = fields.integer({"year"});
    paper.field = fields.text({"field"});
    paper.venue = fields.text({"venue"});
    paper.citations = fields.integer({"gs_citation", "citations"});
    finish_paper(paper, date, year, fields, field_override);
    return paper;
}

}  // namespace novelty::import_detail
