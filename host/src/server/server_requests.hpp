// Reading and checking HTTP request bodies (docs/api.md). Every problem throws UsageError with a
// message that names the field ("ideas[3].date: ...") and what to send instead; the server
// answers it with 400.
#pragma once

#include "novelty/corpus/paper_filter.hpp"
#include "novelty/request/resolver.hpp"

#include "novelty/util/dates.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host {

struct RequestLimits {
    std::size_t max_records = 1024;
    std::size_t max_text_bytes = 100000;
};

/// Parses a body as a JSON object; throws UsageError saying where the JSON is broken.
nlohmann::json parse_body(const std::string& body);

/// Throws a UsageError naming a key of `body` that is not in `known` (the first in sorted order),
/// with the keys the endpoint takes: a misspelt or unsupported option ("split" on
/// /v1/score) is refused rather than silently left out. Records' own keys are not checked.
void refuse_unknown_keys(const nlohmann::json& body, std::initializer_list<const char*> known);

/// The records under `key` (an array of 1..max_records objects), read by the request layer's
/// record_from_json: each needs an "id" (string or integer, unique in the request); "title",
/// "text"/"abstract", "date", "exclude", "filter" and "vector" (dim finite numbers, not all
/// zero) are optional; other keys are ignored. The batch's origin names them as key[i].
RecordBatch parse_records(const nlohmann::json& body, const std::string& key, const RequestLimits& limits, std::size_t dim);

/// An optional positive integer field: its value, `fallback` when absent or null; throws
/// UsageError outside [1, max].
std::size_t parse_count(const nlohmann::json& body, const std::string& key, std::size_t fallback, std::size_t max);

/// An optional date field (YYYY, YYYY-MM or YYYY-MM-DD); nullopt when absent or null.
std::optional<PartialDate> parse_date_field(const nlohmann::json& body, const std::string& key);
/// The request's metadata filter under `key` ({"field", "venue", "min_citations", "papers"}), or
/// an empty filter when absent; a bad one is a UsageError naming the key.
PaperFilter parse_filter_field(const nlohmann::json& body, const std::string& key);

}  // namespace novelty::host
