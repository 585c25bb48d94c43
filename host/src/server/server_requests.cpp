#include "io/json/json_parse.hpp"
#include "request/json/record_filter.hpp"
#include "request/json/record_json.hpp"
#include "server/server_requests.hpp"

#include "novelty/corpus/vectors.hpp"
#include "util/message_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/request/query_records.hpp"

#include <cmath>
#include <unordered_set>

namespace novelty::host {

namespace {

// The JSON path at fault is the error's parameter: the reply names it as "parameter".
[[noreturn]] void bad(const std::string& where, const std::string& problem) { throw UsageError(where + ": " + problem, where); }

std::optional<PartialDate> date_of(const nlohmann::json& v, const std::string& where) {
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) bad(where, "must be a date string (YYYY, YYYY-MM or YYYY-MM-DD), found " + json_type_words(v));
    const std::string text = v.get<std::string>();
    if (text.empty()) return std::nullopt;
    auto date = parse_date(text);
    if (!date) bad(where, quote_value(text) + " is not a date (expected YYYY, YYYY-MM or YYYY-MM-DD)");
    return date;
}

}  // namespace

nlohmann::json parse_body(const std::string& body) {
    nlohmann::json j;
    try {
        j = parse_json(body);
    } catch (const JsonError& e) {
        throw UsageError(std::string("the body is not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object()) throw UsageError("the body must be a JSON object, found " + json_type_words(j));
    return j;
}

void refuse_unknown_keys(const nlohmann::json& body, std::initializer_list<const char*> known) {
    for (auto it = body.begin(); it != body.end(); ++it) {
        bool listed = false;
        for (const char* key : known) listed = listed || it.key() == key;
        if (listed) continue;
        std::string takes;
        for (const char* key : known) takes += std::string(takes.empty() ? "" : ", ") + "\"" + key + "\"";
        // (the key as a message shows it: a NUL or control byte in it would cut or garble the reply)
        bad(clip_for_message(it.key()), "unknown key (the request takes " + takes + ")");
    }
}

RecordBatch parse_records(const nlohmann::json& body, const std::string& key, const RequestLimits& limits, std::size_t dim) {
    auto list = body.find(key);
    if (list == body.end() || list->is_null()) bad(key, "missing: send an array of records, each with an \"id\"");
    if (!list->is_array()) bad(key, "must be an array of records, found " + json_type_words(*list));
    if (list->empty()) bad(key, "is empty: send at least one record");
    if (list->size() > limits.max_records)
        bad(key, "has " + std::to_string(list->size()) + " records; at most " + std::to_string(limits.max_records) +
                     " are allowed per request, so split it");
    RecordOrigin origin;
    origin.key = key;
    origin.hint = "; send \"title\", \"text\" or \"vector\"";
    RecordJsonRules rules;
    rules.dim = dim;
    rules.max_text_bytes = limits.max_text_bytes;
    return records_from_json(*list, rules, std::move(origin));
}

std::size_t parse_count(const nlohmann::json& body, const std::string& key, std::size_t fallback, std::size_t max) {
    auto v = body.find(key);
    if (v == body.end() || v->is_null()) return fallback;
    if (!v->is_number_integer() && !v->is_number_unsigned())
        bad(key, "must be an integer from 1 to " + std::to_string(max) + ", found " + json_type_words(*v));
    if (v->is_number_integer() && v->get<long long>() < 1)
        bad(key, "must be an integer from 1 to " + std::to_string(max) + ", found " + v->dump());
    const auto value = v->get<unsigned long long>();
    if (value < 1 || value > max)
        bad(key, "must be an integer from 1 to " + std::to_string(max) + ", found " + v->dump());
    return static_cast<std::size_t>(value);
}

std::optional<PartialDate> parse_date_field(const nlohmann::json& body, const std::string& key) {
    auto v = body.find(key);
    if (v == body.end()) return std::nullopt;
    return date_of(*v, key);
}

PaperFilter parse_filter_field(const nlohmann::json& body, const std::string& key) {
    auto v = body.find(key);
    return v == body.end() ? PaperFilter{} : filter_from_json(*v, key);
}

}  // namespace novelty::host
