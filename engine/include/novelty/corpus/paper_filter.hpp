// Metadata filters over a corpus's papers: a field, a venue, a citation floor, a list of papers.
// A filter becomes a RowFilter (a bitmask over the corpus rows) that every search backend applies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

class Corpus;
struct RowFilter;

/// A paper passes when it matches every part that is given.
struct PaperFilter {
    std::vector<std::string> fields;  ///< its field is one of these (exact); empty = any field
    std::vector<std::string> venues;  ///< its venue is one of these (exact); empty = any venue
    /// Its citation count is at least this; a paper without a count fails. nullopt = no floor.
    std::optional<std::int64_t> min_citations;
    /// It is one of these papers (by id); nullopt = any paper. Ids not in the corpus are ignored.
    std::optional<std::vector<std::string>> papers;

    bool empty() const { return fields.empty() && venues.empty() && !min_citations && !papers; }
    /// Both filters at once: lists that both give are intersected (an empty intersection allows
    /// no paper), the higher floor wins. Lists of papers are intersected by name as given (a DOI
    /// and the id of the same paper do not meet): RowFilterCache resolves each side on its own.
    PaperFilter and_also(const PaperFilter& other) const;
    /// A canonical text of the filter (sorted lists), equal for equal filters.
    std::string key() const;
};

/// Filter values given as text (command-line flags, files), checked the same way wherever they
/// are read. Each throws UsageError naming `parameter` (as the library knows it: "field",
/// "venue", "min_citations"; the edges name it their own way) or InputError naming file:line.
///
/// A comma-separated list of names ("cs.LG,stat.ML"), each exact; an empty list or an empty name
/// ("", ",", "a,,b") is refused.
std::vector<std::string> filter_names(const std::string& list, const std::string& parameter);
/// A citation floor: a whole number from 0 to 2^63 - 1 in decimal digits; anything else is refused.
std::int64_t parse_min_citations(const std::string& text, const std::string& parameter);
/// A file of names, one per line (a venue that holds a comma): blanks around each trimmed, blank
/// lines and a UTF-8 byte-order mark ignored. InputError for a file that cannot be read or that
/// names none.
std::vector<std::string> read_name_file(const std::string& path);
/// A file of papers (--papers): one id per line, or JSON Lines whose objects give the paper as
/// "id" (a string or an integer); the two may mix. Blank lines and a UTF-8 byte-order mark are
/// ignored. InputError naming file:line for a JSON line that does not parse or has no id, and for
/// a file that cannot be read or names no paper.
std::vector<std::string> read_paper_list(const std::string& path);

/// The names of `ids` that name no paper of `corpus` (by id or alias): how many, and the first
/// `max_listed` of them in the order given.
struct UnknownPapers {
    std::size_t count = 0;
    std::vector<std::string> first;
};
UnknownPapers unknown_papers(const Corpus& corpus, const std::vector<std::string>& ids, std::size_t max_listed = 5);

/// The rows of `corpus` whose papers pass `filter`, in one pass over the papers.
RowFilter rows_matching(const Corpus& corpus, const PaperFilter& filter);

/// The row masks of a corpus's filters, each made once: a run's filter together with a record's
/// own, as the CLI, the server and Python apply them. Keeps the `capacity` most recent masks (it
/// starts over when full). Not thread-safe.
class RowFilterCache {
public:
    explicit RowFilterCache(const Corpus& corpus, std::size_t capacity = 64) : corpus_(corpus), capacity_(capacity) {}
    /// The mask of `run` and `own` together (each resolved on its own, so a list of papers by
    /// alias and one by id meet in the rows they name); null when neither gives any part.
    std::shared_ptr<const RowFilter> rows(const PaperFilter& run, const std::optional<PaperFilter>& own = std::nullopt);

private:
    std::shared_ptr<const RowFilter> rows_of(const PaperFilter& filter);
    std::shared_ptr<const RowFilter> keep(const std::string& key, RowFilter rows);

    const Corpus& corpus_;
    std::size_t capacity_;
    std::map<std::string, std::shared_ptr<const RowFilter>> by_key_;  ///< PaperFilter::key() -> mask
};

}  // namespace novelty
