// The arXiv metadata snapshot (one JSON object per line): {"id", "title", "abstract",
// "categories": "cs.LG stat.ML", "versions": [{"version": "v1", "created": RFC 2822 date}],
// "update_date": "YYYY-MM-DD", "journal-ref", "doi", "authors", ...}. The date is the first
// version's; the field is the primary (first) category; whitespace runs in title and abstract
// (the snapshot keeps the submitters' line breaks) become single spaces.
#include "corpus/import/record_fields.hpp"
#include "io/jsonl.hpp"
#include "util/message_text.hpp"

#include <cctype>

namespace novelty::import_detail {

namespace {

std::string collapse_whitespace(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    bool in_space = false;
    for (char c : text) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            in_space = !out.empty();
            continue;
        }
        if (in_space) out += ' ';
        in_space = false;
        out += c;
    }
    return out;
}

}  // namespace

Paper paper_from_arxiv(const nlohmann::json& record, const std::string& file, std::size_t line,
                       const std::string& field_override) {
    RecordFields fields(record, file, line);
    Paper paper;
    paper.id = fields.id({"id"});
    paper.title = collapse_whitespace(fields.text({"title"}));
    paper.abstract = collapse_whitespace(fields.text({"abstract"}));

    std::optional<PartialDate> date;
    // "versions" and "categories" are read but stay in extra_json: the full history and
    // category list are metadata a user may want.
    const nlohmann::json& raw = fields.record();
    if (auto it = raw.find("versions"); it != raw.end() && !it->is_null()) {
        const nlohmann::json* versions = &*it;
        if (!versions->is_array()) fields.fail("'versions' must be an array");
        if (!versions->empty()) {
            const nlohmann::json& first = (*versions)[0];
            if (!first.is_object() || !first.contains("created") || !first["created"].is_string())
                fields.fail("'versions[0].created' must be a date string");
            const std::string created = first["created"].get<std::string>();
            date = parse_rfc2822_date(created);
            if (!date) date = parse_date(created);
            if (!date) fields.fail("unparseable date " + quote_value(created) + " in 'versions[0].created'");
        }
    }
    if (!date) date = fields.date({"update_date"});
    else fields.use({"update_date"});

    std::string categories;
    if (auto it = raw.find("categories"); it != raw.end() && !it->is_null()) {
        // The snapshot gives a string; anything else would silently leave the field empty: refused.
        if (!it->is_string())
            fields.fail("'categories' must be a string of space-separated categories such as \"cs.LG stat.ML\", found " +
                        json_type_words(*it));
        categories = it->get<std::string>();
    }
    paper.field = categories.substr(0, categories.find(' '));
    paper.venue = fields.text({"journal-ref"});
    finish_paper(paper, date, std::nullopt, fields, field_override);
    return paper;
}

}  // namespace novelty::import_detail
