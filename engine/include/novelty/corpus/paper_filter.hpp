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
    /// no paper), the higher floor wins.
    PaperFilter and_also(const PaperFilter& other) const;
    /// A canonical text of the filter (sorted lists), equal for equal filters.
    std::string key() const;
};

/// The rows of `corpus` whose papers pass `filter`, in one pass over the papers.
RowFilter rows_matching(const Corpus& corpus, const PaperFilter& filter);

/// The row masks of a corpus's filters, each made once: a run's filter together with a record's
/// own, as the CLI, the server and Python apply them. Keeps the `capacity` most recent masks (it
/// starts over when full). Not thread-safe.
class RowFilterCache {
public:
    explicit RowFilterCache(const Corpus& corpus, std::size_t capacity = 64) : corpus_(corpus), capacity_(capacity) {}
    /// The mask of `run` and `own` together; null when neither gives any part.
    std::shared_ptr<const RowFilter> rows(const PaperFilter& run, const std::optional<PaperFilter>& own = std::nullopt);

private:
    const Corpus& corpus_;
    std::size_t capacity_;
    std::map<std::string, std::shared_ptr<const RowFilter>> by_key_;  ///< PaperFilter::key() -> mask
};

}  // namespace novelty
