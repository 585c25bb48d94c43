// Reading typed fields out of one JSON record, with errors that name file, line and key.
// Each format's converter (format_*.cpp) builds a Paper with these.
#pragma once

#include "novelty/util/dates.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/corpus/paper.hpp"
#include "novelty/util/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
    /// Whether integer() reads a string of digits ("12") as its number, or refuses any string.
    enum class Strings { read, refused };
    /// An integer (or a whole-number float, or a string of digits unless `strings` is refused),
    /// nullopt when absent or null (or, when strings are read, an empty string); throws otherwise.
    std::optional<std::int64_t> integer(std::initializer_list<const char*> keys, Strings strings = Strings::read);
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

/// Whether finish_paper requires a title or an abstract now, or leaves that check to a later
/// join (the s2 papers files, whose abstracts come in other files).
enum class TextRule { required, may_come_later };

/// Completes a converted paper: date/year consistency, text present (unless `text_rule` says it
/// may come later). A non-empty
/// `field_override` replaces the field the record gave (which then stays in extra_json under
/// its own key).
/// Throws through `fields` on problems.
void finish_paper(Paper& paper, const std::optional<PartialDate>& date, std::optional<std::int64_t> year,
                  RecordFields& fields, const std::string& field_override, TextRule text_rule = TextRule::required);

/// The last check before a paper is stored, for every importer: each text it holds (id, title,
/// abstract, date, field, venue, extra, aliases) is valid UTF-8, so no later command meets text it
/// cannot read. Throws InputError at file:line naming the text and the byte otherwise.
void check_stored_text(const Paper& paper, const std::string& file, std::size_t line);
/// The same check for one text (`what` names it in the message).
void check_stored_text(const std::string& text, const std::string& what, const std::string& file, std::size_t line);

/// The kinds of external id a paper may be named by. add_aliases adds the forms of `value`
/// that find_row resolves (nothing when `value` is empty):
///   doi: "DOI" and "doi:DOI" (a "https://doi.org/" prefix removed); arxiv: "ID" and "arxiv:ID";
///   pmid: "pmid:N" and "pubmed:N"; pmc: "PMCN" and "pmc:PMCN"; corpusid: "corpusid:N".
enum class AliasKind { doi, arxiv, pmid, pmc, corpusid };
void add_aliases(Paper& paper, AliasKind kind, const std::string& value);

/// Semantic Scholar dataset records (format_s2.cpp).
enum class S2Kind { paper, abstract, vector, citation };
S2Kind s2_record_kind(const nlohmann::json& record);
struct S2Abstract {
    std::string corpusid;
    std::string abstract;  ///< "" when null
};
struct S2Vector {
    std::string corpusid;
    std::string model;
    std::vector<float> values;
};
S2Abstract s2_abstract(const nlohmann::json& record, const std::string& file, std::size_t line);
/// Reads an embeddings line into `out` (reusing its storage); throws InputError for a missing
/// model, a vector that is not a list of finite numbers, or an empty one.
void s2_vector(const nlohmann::json& record, const std::string& file, std::size_t line, S2Vector& out);

/// Converters, one per format.
Paper paper_from_jsonl(const nlohmann::json& record, const std::string& file, std::size_t line,
                       const std::string& field_override);
Paper paper_from_arxiv(const nlohmann::json& record, const std::string& file, std::size_t line,
                       const std::string& field_override);
Paper paper_from_openalex(const nlohmann::json& record, const std::string& file, std::size_t line,
                          const std::string& field_override);
Paper paper_from_paperlists(const nlohmann::json& record, const std::string& file, std::size_t line,
                            const std::string& field_override);
/// A papers-file record; its title may be empty (its abstract comes from an abstracts file).
Paper paper_from_s2(const nlohmann::json& record, const std::string& file, std::size_t line,
                    const std::string& field_override);

/// What read_pubmed reports, in file order: each article, each PMID of a DeleteCitation (with
/// the line its element starts on), and each record it cannot read (malformed XML, no PMID,
/// no text, a bad date), which `skip` throws or records. `progress` gets bytes read and the
/// file size now and then.
struct PubmedSink {
    std::function<void(Paper&& paper, std::size_t line)> article;
    std::function<void(const std::string& pmid, std::size_t line)> deletion;
    std::function<void(const InputError& error)> skip;
    std::function<void(std::uint64_t bytes_read, std::uint64_t file_bytes)> progress;
};

/// Reads a PubMed baseline or update file (XML, plain or gzip) and returns its SHA-256. Throws
/// InputError for an unreadable file or a record left open at its end.
std::string read_pubmed(const std::string& path, const PubmedSink& sink);

/// Dispatches on format.
Paper paper_from_record(ImportFormat format, const nlohmann::json& record, const std::string& file,
                        std::size_t line, const std::string& field_override);

}  // namespace novelty::import_detail
