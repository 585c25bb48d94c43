#include "corpus/import/record_fields.hpp"

#include "io/jsonl.hpp"
#include "io/text_lines.hpp"
#include "io/json/json_parse.hpp"
#include "util/message_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/corpus.hpp"

#include <cmath>
#include <cstdint>

namespace novelty::import_detail {

const nlohmann::json* RecordFields::find(std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
        auto it = record_.find(key);
        if (it != record_.end() && !it->is_null()) {
            used_.insert(key);
            return &*it;
        }
    }
    for (const char* key : keys) used_.insert(key);  // null or absent: nothing to keep
    return nullptr;
}

void RecordFields::use(std::initializer_list<const char*> keys) {
    for (const char* key : keys) used_.insert(key);
}

void RecordFields::fail(const std::string& problem) const { throw InputError(file_, line_, problem); }

std::string RecordFields::id(std::initializer_list<const char*> keys) {
    const nlohmann::json* value = find(keys);
    std::string name = *keys.begin();
    if (!value) fail("missing '" + name + "': every record needs an id");
    std::string id;
    if (value->is_string()) id = value->get<std::string>();
    else if (value->is_number_integer() || value->is_number_unsigned()) id = value->dump();
    else fail("'" + name + "' must be a string or an integer, found " + json_type_words(*value));
    if (id.find_first_not_of(" \t") == std::string::npos) fail("'" + name + "' is empty");
    return id;
}

std::string RecordFields::text(std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
        auto it = record_.find(key);
        used_.insert(key);
        if (it == record_.end() || it->is_null()) continue;
        if (!it->is_string())
            fail(std::string("'") + key + "' must be a string, found " + json_type_words(*it));
        std::string value = it->get<std::string>();
        if (!value.empty()) return value;
    }
    return {};
}

std::optional<std::int64_t> RecordFields::integer(std::initializer_list<const char*> keys, Strings strings) {
    for (const char* key : keys) {
        auto it = record_.find(key);
        used_.insert(key);
        if (it == record_.end() || it->is_null()) continue;
        if (it->is_number_unsigned()) {  // (also an integer to nlohmann: read first, so it cannot wrap)
            if (it->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX))
                return static_cast<std::int64_t>(it->get<std::uint64_t>());
        } else if (it->is_number_integer()) {
            return it->get<std::int64_t>();
        }
        if (it->is_string() && strings == Strings::refused)
            fail(std::string("'") + key + "' must be a number, found a string " + quote_value(it->get<std::string>()));
        if (it->is_number_float()) {
            const double v = it->get<double>();
            if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
        }
        if (it->is_string()) {
            const std::string s = it->get<std::string>();
            if (s.empty()) continue;
            std::size_t used = 0;
            try {
                const long long v = std::stoll(s, &used);
                if (used == s.size()) return v;
            } catch (const std::exception&) {
            }
        }
        fail(std::string("'") + key + "' must be an integer, found " +
             (it->is_string() ? quote_value(it->get<std::string>()) : clip_for_message(dump_json(*it))));
    }
    return std::nullopt;
}

std::optional<PartialDate> RecordFields::date(std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
        auto it = record_.find(key);
        used_.insert(key);
        if (it == record_.end() || it->is_null()) continue;
        if (!it->is_string())
            fail(std::string("'") + key + "' must be a date string, found " + json_type_words(*it));
        const std::string s = it->get<std::string>();
        if (s.find_first_not_of(" \t") == std::string::npos) continue;
        auto parsed = parse_date(s);
        if (!parsed)
            fail("unparseable date " + quote_value(s) + " in '" + key +
                 "' (expected YYYY, YYYY-MM or YYYY-MM-DD, optionally followed by a time)");
        return parsed;
    }
    return std::nullopt;
}

std::string RecordFields::extra_json() const {
    nlohmann::json extra = nlohmann::json::object();
    for (auto it = record_.begin(); it != record_.end(); ++it)
        if (!used_.count(it.key()) && !it->is_null()) {
            auto renamed = renamed_.find(it.key());
            extra[renamed == renamed_.end() ? it.key() : renamed->second] = *it;
        }
    return dump_json(extra);
}

void finish_paper(Paper& paper, const std::optional<PartialDate>& date, std::optional<std::int64_t> year,
                  RecordFields& fields, const std::string& field_override, TextRule text_rule) {
    std::optional<PartialDate> effective = date;
    if (year) {
        auto from_year = date_from_year(*year);
        if (!from_year) fields.fail("year " + std::to_string(*year) + " is out of range (1000-9999)");
        if (date && date->year != *year)
            fields.fail("year " + std::to_string(*year) + " disagrees with date '" + date->text() + "'");
        if (!effective) effective = from_year;
    }
    if (effective) {
        paper.date = effective->text();
        paper.sort_date = effective->effective();
        paper.year = effective->year;
    }
    if (paper.title.empty() && paper.abstract.empty() && text_rule == TextRule::required)
        fields.fail("missing text: the record has neither a title nor an abstract");
    if (!field_override.empty()) {
        if (!paper.field.empty() && paper.field != field_override) fields.keep("field");
        paper.field = field_override;
    }
    if (paper.citations && *paper.citations < 0) paper.citations.reset();
    paper.extra_json = fields.extra_json();
}

void check_stored_text(const std::string& text, const std::string& what, const std::string& file, std::size_t line) {
    const std::size_t bad = find_invalid_utf8(text);
    if (bad == std::string_view::npos) return;
    throw InputError(file, line, what + " is not valid UTF-8 (byte " + std::to_string(bad + 1) + " of " +
                                     std::to_string(text.size()) + "): it would be unreadable later, so it is not stored");
}

void check_stored_text(const Paper& paper, const std::string& file, std::size_t line) {
    check_stored_text(paper.id, "the id", file, line);
    check_stored_text(paper.title, "the title", file, line);
    check_stored_text(paper.abstract, "the abstract", file, line);
    check_stored_text(paper.date, "the date", file, line);
    check_stored_text(paper.field, "the field", file, line);
    check_stored_text(paper.venue, "the venue", file, line);
    check_stored_text(paper.extra_json, "the extra metadata", file, line);
    for (const auto& alias : paper.aliases) check_stored_text(alias, "an alias", file, line);
}

void add_aliases(Paper& paper, AliasKind kind, const std::string& value) {
    std::string v = normalize_alias(value);
    if (v.empty()) return;
    auto add = [&](const std::string& alias) { paper.aliases.push_back(normalize_alias(alias)); };
    switch (kind) {
        case AliasKind::doi:
            if (v.rfind("doi:", 0) == 0) v.erase(0, 4);
            add(v);
            add("doi:" + v);
            break;
        case AliasKind::arxiv:
            if (v.rfind("arxiv:", 0) == 0) v.erase(0, 6);
            add(v);
            add("arxiv:" + v);
            break;
        case AliasKind::pmid:
            add("pmid:" + v);
            add("pubmed:" + v);
            break;
        case AliasKind::pmc:
            if (v.rfind("pmc", 0) != 0) v = "pmc" + v;
            add(v);
            add("pmc:" + v);
            break;
        case AliasKind::corpusid: add("corpusid:" + v); break;
    }
}

Paper paper_from_record(ImportFormat format, const nlohmann::json& record, const std::string& file,
                        std::size_t line, const std::string& field_override) {
    switch (format) {
        case ImportFormat::jsonl: return paper_from_jsonl(record, file, line, field_override);
        case ImportFormat::arxiv: return paper_from_arxiv(record, file, line, field_override);
        case ImportFormat::openalex: return paper_from_openalex(record, file, line, field_override);
        case ImportFormat::paperlists: return paper_from_paperlists(record, file, line, field_override);
        case ImportFormat::s2: return paper_from_s2(record, file, line, field_override);
        case ImportFormat::pubmed: break;  // XML: read by read_pubmed, never as JSON records
    }
    throw Error("unknown import format");
}

}  // namespace novelty::import_detail
