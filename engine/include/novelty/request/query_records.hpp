// Ideas, proposals and queries as users give them: JSON Lines with an id, optional text, an
// optional date (cutoff) and optional ids to leave out (docs/formats.md).
#pragma once

#include "novelty/corpus/paper_filter.hpp"

#include "novelty/util/dates.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace novelty {

struct QueryRecord {
    std::string id;
    std::string title;
    std::string text;                   ///< "text", else "abstract"
    std::optional<PartialDate> date;    ///< the record's own cutoff
    std::vector<std::string> exclude;   ///< paper ids to treat as absent
    /// "pool": the paper ids of the record's own candidate pool (ClaimNov); nullopt when absent.
    std::optional<std::vector<std::string>> pool;
    /// "filter": the record's own metadata filter ({"field", "venue", "min_citations",
    /// "papers"}), applied together with the run's; nullopt when absent.
    std::optional<PaperFilter> filter;
    std::size_t line = 0;               ///< 1-based line in the file

    bool has_text() const { return !title.empty() || !text.empty(); }
};

/// True when `text` holds nothing but whitespace (spaces, tabs, line breaks) or nothing at all.
/// Such a title or text counts as absent: there is nothing to embed.
bool is_blank(std::string_view text);

/// Reads every record of a JSON Lines file (plain or gzip). Each record needs an "id" (string or
/// integer, unique in the file); "title", "text"/"abstract", "date", "exclude" and "pool" (arrays
/// of ids; a pool must name at least one) are optional; other keys are ignored. Throws InputError
/// naming file and line for malformed JSON, a missing or repeated id, a bad date or a malformed
/// exclude or pool list, and for a file with no records.
std::vector<QueryRecord> read_query_records(const std::string& path);

/// Parses a cutoff ("2018", "2018-06", "2018-06-30"); throws UsageError naming `parameter`
/// (the CLI shows it as its flag, the server as its JSON key) otherwise.
PartialDate parse_cutoff(const std::string& text, const std::string& parameter = "cutoff");

}  // namespace novelty
