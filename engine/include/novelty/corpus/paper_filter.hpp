// Metadata filters over a corpus's papers: a field, a venue, a citation floor, a list of papers.
// A filter becomes a RowFilter (a bitmask over the corpus rows) that every search backend applies.
#pragma once

#include <cstdint>
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
    /// Both filters at once: lists that both give are intersected, the higher floor wins.
    PaperFilter and_also(const PaperFilter& other) const;
    /// A canonical text of the filter (sorted lists), equal for equal filters.
    std::string key() const;
};

/// The rows of `corpus` whose papers pass `filter`, in one pass over the papers.
RowFilter rows_matching(const Corpus& corpus, const PaperFilter& filter);

}  // namespace novelty
