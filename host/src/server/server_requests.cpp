#include "json_parse.hpp"
#include "record_filter.hpp"
#include "server/server_requests.hpp"

#include "novelty/corpus/vectors.hpp"
#include "novelty/util/message_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/query_records.hpp"

#include <cmath>
#include <unordered_set>

namespace novelty::host {

namespace {

std::string type_words(const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::boolean: return "a boolean";
        case nlohmann::json::value_t::string: return "a string";
        case nlohmann::json::value_t::array: return "an array";
        case nlohmann::json::value_t::object: return "an object";
        case nlohmann::json::value_t::number_float: return "a number with a fraction";
        default: return "a number";
    }
}

// The JSON path at fault is the error's parameter: the reply names it as "parameter".
[[noreturn]] void bad(const std::string& where, const std::string& problem) { throw UsageError(where + ": " + problem, where); }

std::string optional_text(const nlohmann::json& record, const char* key, const std::string& where) {
    auto v = record.find(key);
    if (v == record.end() || v->is_null()) return {};
    if (!v->is_string()) bad(where + "." + key, "must be a string, found " + type_words(*v));
    std::string text = v->get<std::string>();
    return is_blank(text) ? std::string() : text;  // only whitespace: nothing to embed
}

std::optional<PartialDate> date_of(const nlohmann::json& v, const std::string& where) {
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) bad(where, "must be a date string (YYYY, YYYY-MM or YYYY-MM-DD), found " + type_words(v));
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
    if (!j.is_object()) throw UsageError("the body must be a JSON object, found " + type_words(j));
    return j;
}

void refuse_unknown_keys(const nlohmann::json& body, std::initializer_list<const char*> known) {
    for (auto it = body.begin(); it != body.end(); ++it) {
        bool listed = false;
        for (const char* key : known) listed = listed || it.key() == key;
        if (listed) continue;
        std::string takes;
        for (const char* key : known) takes += std::string(takes.empty() ? "" : ", ") + "\"" + key + "\"";
        bad(it.key(), "unknown key (the request takes " + takes + ")");
    }
}

std::vector<ApiRecord> parse_records(const nlohmann::json& body, const std::string& key, const RequestLimits& limits,
                                     std::size_t dim) {
    auto list = body.find(key);
    if (list == body.end() || list->is_null()) bad(key, "missing: send an array of records, each with an \"id\"");
    if (!list->is_array()) bad(key, "must be an array of records, found " + type_words(*list));
    if (list->empty()) bad(key, "is empty: send at least one record");
    if (list->size() > limits.max_records)
        bad(key, "has " + std::to_string(list->size()) + " records; at most " + std::to_string(limits.max_records) +
                     " are allowed per request, so split it");
    std::vector<ApiRecord> records;
    records.reserve(list->size());
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const nlohmann::json& j = (*list)[i];
        const std::string where = key + "[" + std::to_string(i) + "]";
        if (!j.is_object()) bad(where, "must be an object with an \"id\", found " + type_words(j));
        ApiRecord r;
        auto id = j.find("id");
        if (id == j.end() || id->is_null()) bad(where, "missing \"id\": every record needs an id");
        if (id->is_string()) r.id = id->get<std::string>();
        else if (id->is_number_integer() || id->is_number_unsigned()) r.id = id->dump();
        else bad(where + ".id", "must be a string or an integer, found " + type_words(*id));
        if (r.id.empty()) bad(where + ".id", "is empty");
        if (!seen.insert(r.id).second) bad(where + ".id", quote_value(r.id) + " appears twice in this request; ids must be unique");
        r.title = optional_text(j, "title", where);
        r.text = optional_text(j, "text", where);
        if (r.text.empty()) r.text = optional_text(j, "abstract", where);
        if (r.title.size() + r.text.size() > limits.max_text_bytes)
            bad(where, "title and text hold " + std::to_string(r.title.size() + r.text.size()) + " bytes; at most " +
                           std::to_string(limits.max_text_bytes) + " are allowed");
        if (auto d = j.find("date"); d != j.end()) r.date = date_of(*d, where + ".date");
        if (auto ex = j.find("exclude"); ex != j.end() && !ex->is_null()) {
            if (!ex->is_array()) bad(where + ".exclude", "must be an array of paper ids, found " + type_words(*ex));
            for (const auto& e : *ex) {
                if (e.is_string()) r.exclude.push_back(e.get<std::string>());
                else if (e.is_number_integer()) r.exclude.push_back(e.dump());
                else bad(where + ".exclude", "must hold paper ids (strings), found " + type_words(e));
            }
        }
        if (auto f = j.find("filter"); f != j.end())
            r.filter = parse_record_filter(*f, [&](const std::string& problem) { bad(where + ".filter", problem); });
        if (auto v = j.find("vector"); v != j.end() && !v->is_null()) {
            if (!v->is_array()) bad(where + ".vector", "must be an array of numbers, found " + type_words(*v));
            if (v->size() != dim)
                bad(where + ".vector", "has " + std::to_string(v->size()) + " numbers but the corpus vectors have " +
                                           std::to_string(dim));
            r.vector.reserve(dim);
            for (const auto& x : *v) {
                if (!x.is_number()) bad(where + ".vector", "must hold numbers only, found " + type_words(x));
                const double value = x.get<double>();
                if (!std::isfinite(value) || !std::isfinite(static_cast<float>(value)))
                    bad(where + ".vector", "holds a value that is not a finite float");
                r.vector.push_back(static_cast<float>(value));
            }
            if (row_problem(r.vector.data(), r.vector.size()) == RowProblem::zero)
                bad(where + ".vector", "is a zero vector, which has no direction to compare");
        }
        records.push_back(std::move(r));
    }
    return records;
}

std::size_t parse_count(const nlohmann::json& body, const std::string& key, std::size_t fallback, std::size_t max) {
    auto v = body.find(key);
    if (v == body.end() || v->is_null()) return fallback;
    if (!v->is_number_integer() && !v->is_number_unsigned())
        bad(key, "must be an integer from 1 to " + std::to_string(max) + ", found " + type_words(*v));
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
    if (v == body.end() || v->is_null()) return {};
    return parse_record_filter(*v, [&](const std::string& problem) { bad(key, problem); });
}

}  // namespace novelty::host
