// One idea, query or record given as a JSON object: the one reader behind JSON Lines files
// (read_query_records), HTTP request bodies (the server) and Python dicts (sent as JSON).
// Internal: shared by the engine and the edges that speak JSON; public headers carry no JSON types.
#pragma once

#include "novelty/request/query_records.hpp"
#include "novelty/request/resolver.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <functional>
#include <string>

namespace novelty {

/// What a record may hold besides the common keys.
struct RecordJsonRules {
    /// "vector" is read and must hold this many finite numbers, not all zero; 0: "vector" is not
    /// read (ignored, as other unknown keys are).
    std::size_t dim = 0;
    /// Title and text together may hold at most this many bytes; 0: no limit.
    std::size_t max_text_bytes = 0;
    bool pool = false;  ///< "pool" (a ClaimNov candidate list) is read; else ignored
};

/// Reports a problem of the record and throws (it must not return). `field` is the key at fault
/// ("id", "date", "vector", ...; "" for the record as a whole); `problem` is a whole sentence
/// that names the key itself ("'title' must be a string, found a number").
using RecordFail = std::function<void(const std::string& field, const std::string& problem)>;

/// The record of JSON object `j`: "id" (string or integer, not empty) is required; "title",
/// "text" (else "abstract"), "date", "exclude", "filter" and, by `rules`, "pool" and "vector"
/// are optional; a title or text of whitespace alone counts as absent; other keys are ignored.
/// `vector` receives rules.dim floats when the record gives "vector" (then `has_vector` is set);
/// it may be null when rules.dim is 0. Line and duplicate ids are the caller's. Every problem
/// goes to `fail`.
QueryRecord record_from_json(const nlohmann::json& j, const RecordJsonRules& rules, float* vector, bool& has_vector,
                             const RecordFail& fail);

/// The records of the JSON array `list`, each read by record_from_json with `rules` (rules.dim
/// also sizes the batch's given vectors), ids unique; a problem is reported by `origin` as
/// key[i] (a request's records), or at line i + 1 of origin.file.
RecordBatch records_from_json(const nlohmann::json& list, const RecordJsonRules& rules, RecordOrigin origin);

/// A run's metadata filter given as JSON (a request's or Python's "filter"); null or absent
/// parts allow every paper. Problems are UsageErrors naming `key`.
PaperFilter filter_from_json(const nlohmann::json& value, const std::string& key);

}  // namespace novelty
