// Reading typed fields out of one JSON record, with errors that name file, line and key.
// Each format's converter (format_*.cpp) builds a Paper with these.
#pragma once

#include "novelty/util/dates.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/corpus/paper.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace novelty::import_detail {

/// One record being converted: remembers which keys were used, so the rest go to extra_json.
class RecordFields {
public:
    RecordFields(const nlohmann::json& record, const std::string& file, std::size_t line)
        : record_(record), file_(file), line_(line) {}

    /// The first present, non-null key of `keys`, or nullptr. Marks it used.
    const nlohmann::json* find(std::initializer_list<const char*> keys);
    /// An id: a non-empty string or an integer. Throws when missing.
    std::string id(std::initializer_list<const char*> keys);
    /// A string, "" when absent or null; throws when another type.
    std::string text(std::initializer_list<const char*> keys);
    /// An integer (or a whole-number float, or a string of digits), nullopt when absent or null.
    std::optional<std::int64_t> integer(std::initializer_list<const char*> keys);
    /// A date string (see parse_date), nullopt when absent/null/empty; throws when unparseable.
    std::optional<PartialDate> date(std::initializer_list<const char*> keys);
    /// Marks keys as used without reading them.
    void use(std::initializer_list<const char*> keys);
    /// Unmarks a key, so it is kept in extra_json after all.
    void keep(const std::string& key) { used_.erase(key); }
    /// Stores a kept key under another name in extra_json.
    void rename_kept(const std::string& key, const std::string& name) { renamed_[key] = name; }

    /// Throws InputError for this record's line.
    [[noreturn]] void fail(const std::string& problem) const;
    /// The record's unused keys as a JSON object text.
    std::string extra_json() const;

    const nlohmann::json& record() const { return record_; }

private:
    const nlohmann::json& record_;
    const std::string& file_;
    std::size_t line_;
    std::set<std::string> used_;
    std::map<std::string, std::string> renamed_;
};

/// Completes a converted paper: date/year consistency, text present. A non-empty
/// `field_override` replaces the field the record gave (which then stays in extra_json under
/// its own key).
/// Throws through `fields` on problems.
void finish_paper(Paper& paper, const std::optional<PartialDate>& date, std::optional<std::int64_t> year,
                  RecordFields& fields, const std::string& field_override);

/// Converters, one per format.
Paper paper_from_jsonl(const nlohmann::json& record, const std::string& file, std::size_t line,
                       const std::string& field_override);
Paper paper_from_arxiv(const nlohmann::json& record, const std::string& file, std::size_t line,
                       const std::string& field_override);
Paper paper_from_openalex(const nlohmann::json& record, const std::string& file, std::size_t line,
                          const std::string& field_override);
Paper paper_from_paperlists(const nlohmann::json& record, const std::string& file, std::size_t line,
                            const std::string& field_override);

/// Dispatches on format.
Paper paper_from_record(ImportFormat format, const nlohmann::json& record, const std::string& file,
                        std::size_t line, const std::string& field_override);

}  // namespace novelty::import_detail
