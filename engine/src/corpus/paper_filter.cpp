#include "novelty/corpus/paper_filter.hpp"

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/search.hpp"

#include <algorithm>

namespace novelty {

namespace {

std::vector<std::string> sorted_unique(std::vector<std::string> values) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

std::vector<std::string> intersection(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const std::vector<std::string> x = sorted_unique(a), y = sorted_unique(b);
    std::vector<std::string> out;
    std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out));
    return out;
}

/// Both lists at once: one alone when the other is empty (any value), else their intersection;
/// `none` is set when that intersection is empty (no value passes both).
std::vector<std::string> both(const std::vector<std::string>& a, const std::vector<std::string>& b, bool& none) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    std::vector<std::string> out = intersection(a, b);
    none = none || out.empty();
    return out;
}

void append_list(std::string& key, const char* name, const std::vector<std::string>& values) {
    key += name;
    for (const auto& value : sorted_unique(values)) key += '\x1f' + value;
    key += '\x1e';
}

}  // namespace

PaperFilter PaperFilter::and_also(const PaperFilter& other) const {
    PaperFilter out;
    bool none = false;
    out.fields = both(fields, other.fields, none);
    out.venues = both(venues, other.venues, none);
    out.min_citations = min_citations;
    if (other.min_citations && (!out.min_citations || *other.min_citations > *out.min_citations))
        out.min_citations = other.min_citations;
    if (papers && other.papers) out.papers = intersection(*papers, *other.papers);
    else out.papers = papers ? papers : other.papers;
    // Disjoint fields or venues: an empty list of papers is the filter that allows none.
    if (none) out.papers = std::vector<std::string>{};
    return out;
}

std::string PaperFilter::key() const {
    std::string key;
    append_list(key, "f", fields);
    append_list(key, "v", venues);
    key += "c" + (min_citations ? std::to_string(*min_citations) : std::string("-")) + '\x1e';
    if (papers) append_list(key, "p", *papers);
    return key;
}

RowFilter rows_matching(const Corpus& corpus, const PaperFilter& filter) {
    RowFilter rows = RowFilter::none(corpus.size());
    const std::vector<std::string> fields = sorted_unique(filter.fields), venues = sorted_unique(filter.venues);
    const auto in = [](const std::vector<std::string>& list, const std::string& value) {
        return list.empty() || std::binary_search(list.begin(), list.end(), value);
    };
    if (filter.papers) {
        // A list of papers: look each one up, then apply the other parts to those rows only.
        for (const auto& id : filter.papers.value())
            if (const auto row = corpus.find_row(id)) rows.allow(*row);
        if (fields.empty() && venues.empty() && !filter.min_citations) return rows;
    }
    corpus.scan_metadata([&](std::size_t row, const std::string& field, const std::string& venue,
                             const std::optional<std::int64_t>& citations) {
        if (filter.papers && !rows.allows(static_cast<std::int64_t>(row))) return;
        const bool pass = in(fields, field) && in(venues, venue) &&
                          (!filter.min_citations || (citations && *citations >= *filter.min_citations));
        if (pass) rows.allow(row);
        else if (filter.papers) rows.deny(row);
    });
    return rows;
}

std::shared_ptr<const RowFilter> RowFilterCache::keep(const std::string& key, RowFilter rows) {
    if (by_key_.size() >= capacity_) by_key_.clear();
    return by_key_[key] = std::make_shared<const RowFilter>(std::move(rows));
}

std::shared_ptr<const RowFilter> RowFilterCache::rows_of(const PaperFilter& filter) {
    if (filter.empty()) return nullptr;
    const std::string key = filter.key();
    if (auto it = by_key_.find(key); it != by_key_.end()) return it->second;
    return keep(key, rows_matching(corpus_, filter));
}

std::shared_ptr<const RowFilter> RowFilterCache::rows(const PaperFilter& run, const std::optional<PaperFilter>& own) {
    if (!own || own->empty()) return rows_of(run);
    if (run.empty()) return rows_of(*own);
    // Each side's mask, then the rows both allow: names of papers are resolved on each side.
    const std::string key = run.key() + '\x1d' + own->key();
    if (auto it = by_key_.find(key); it != by_key_.end()) return it->second;
    const std::shared_ptr<const RowFilter> a = rows_of(run), b = rows_of(*own);
    RowFilter both = *a;
    for (std::size_t w = 0; w < both.words.size(); ++w) both.words[w] &= b->words[w];
    return keep(key, std::move(both));
}

}  // namespace novelty
