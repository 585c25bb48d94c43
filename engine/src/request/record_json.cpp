#include "request/json/record_json.hpp"

#include "io/json/json_parse.hpp"
#include "novelty/corpus/vectors.hpp"
#include "novelty/util/error.hpp"
#include "util/message_text.hpp"
#include "request/json/record_filter.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <stdexcept>

namespace novelty {

namespace {

/// Calls `fail`, which must throw.
[[noreturn]] void refuse(const RecordFail& fail, const std::string& field, const std::string& problem) {
    fail(field, problem);
    throw std::logic_error("RecordFail returned");
}

std::string text_of(const nlohmann::json& j, const char* key, const RecordFail& fail) {
    auto v = j.find(key);
    if (v == j.end() || v->is_null()) return {};
    if (!v->is_string()) refuse(fail, key, std::string("'") + key + "' must be a string, found " + json_type_words(*v));
    std::string value = v->get<std::string>();
    return is_blank(value) ? std::string() : value;  // only whitespace: nothing to embed
}

/// Reads the array of ids under `key` into `out`; false when the key is absent or null.
bool id_array(const nlohmann::json& j, const char* key, std::vector<std::string>& out, const RecordFail& fail) {
    auto list = j.find(key);
    if (list == j.end() || list->is_null()) return false;
    const std::string k = std::string("'") + key + "'";
    if (!list->is_array()) refuse(fail, key, k + " must be an array of paper ids, found " + json_type_words(*list));
    for (const auto& e : *list) {
        if (e.is_string()) out.push_back(e.get<std::string>());
        else if (e.is_number_integer()) out.push_back(e.dump());
        else refuse(fail, key, k + " must hold paper ids (strings), found " + json_type_words(e));
    }
    return true;
}

std::string id_of(const nlohmann::json& j, const RecordFail& fail) {
    auto id = j.find("id");
    if (id == j.end() || id->is_null()) refuse(fail, "", "missing 'id': every record needs an id");
    std::string out;
    if (id->is_string()) out = id->get<std::string>();
    else if (id->is_number_integer() || id->is_number_unsigned()) out = id->dump();
    else refuse(fail, "id", "'id' must be a string or an integer, found " + json_type_words(*id));
    if (out.empty()) refuse(fail, "id", "'id' is empty");
    return out;
}

std::optional<PartialDate> date_of(const nlohmann::json& j, const RecordFail& fail) {
    auto v = j.find("date");
    if (v == j.end() || v->is_null()) return std::nullopt;
    if (!v->is_string())
        refuse(fail, "date", "'date' must be a date string (YYYY, YYYY-MM or YYYY-MM-DD), found " + json_type_words(*v));
    const std::string text = v->get<std::string>();
    if (is_blank(text)) return std::nullopt;
    auto date = parse_date(text);
    if (!date) refuse(fail, "date", "unparseable date " + quote_value(text) + " (expected YYYY, YYYY-MM or YYYY-MM-DD)");
    return date;
}

void vector_of(const nlohmann::json& v, std::size_t dim, float* out, const RecordFail& fail) {
    if (!v.is_array()) refuse(fail, "vector", "'vector' must be an array of numbers, found " + json_type_words(v));
    if (v.size() != dim)
        refuse(fail, "vector", "'vector' has " + std::to_string(v.size()) + " numbers but the corpus vectors have " +
                                   std::to_string(dim));
    for (std::size_t c = 0; c < dim; ++c) {
        const nlohmann::json& x = v[c];
        if (!x.is_number()) refuse(fail, "vector", "'vector' must hold numbers only, found " + json_type_words(x));
        const double value = x.get<double>();
        if (!std::isfinite(value) || !std::isfinite(static_cast<float>(value)))
            refuse(fail, "vector", "'vector' holds a value that is not a finite float");
        out[c] = static_cast<float>(value);
    }
    if (row_problem(out, dim) == RowProblem::zero)
        refuse(fail, "vector", "'vector' is a zero vector, which has no direction to compare");
}

}  // namespace

QueryRecord record_from_json(const nlohmann::json& j, const RecordJsonRules& rules, float* vector, bool& has_vector,
                             const RecordFail& fail) {
    has_vector = false;
    if (!j.is_object()) refuse(fail, "", "expected a JSON object with an 'id', found " + json_type_words(j));
    QueryRecord r;
    r.id = id_of(j, fail);
    r.title = text_of(j, "title", fail);
    r.text = text_of(j, "text", fail);
    if (r.text.empty()) r.text = text_of(j, "abstract", fail);
    if (rules.max_text_bytes > 0 && r.title.size() + r.text.size() > rules.max_text_bytes)
        refuse(fail, "", "title and text hold " + std::to_string(r.title.size() + r.text.size()) + " bytes; at most " +
                             std::to_string(rules.max_text_bytes) + " are allowed");
    r.date = date_of(j, fail);
    id_array(j, "exclude", r.exclude, fail);
    if (rules.pool) {
        std::vector<std::string> pool;
        if (id_array(j, "pool", pool, fail)) {
            if (pool.empty()) refuse(fail, "pool", "'pool' is empty: name at least one paper, or leave it out");
            r.pool = std::move(pool);
        }
    }
    if (auto filter = j.find("filter"); filter != j.end())
        r.filter = parse_record_filter(*filter, [&](const std::string& problem) { refuse(fail, "filter", problem); });
    if (rules.dim > 0)
        if (auto v = j.find("vector"); v != j.end() && !v->is_null()) {
            vector_of(*v, rules.dim, vector, fail);
            has_vector = true;
        }
    return r;
}

RecordBatch records_from_json(const nlohmann::json& list, const RecordJsonRules& rules, RecordOrigin origin) {
    RecordBatch batch;
    batch.origin = std::move(origin);
    const std::size_t n = list.size(), dim = rules.dim;
    if (dim > 0) {
        batch.dim = dim;
        batch.given.assign(n * dim, 0.0f);
        batch.has_vector.assign(n, 0);
    }
    std::unordered_map<std::string, std::size_t> first;
    for (std::size_t i = 0; i < n; ++i) {
        const RecordFail fail = [&](const std::string& field, const std::string& problem) {
            batch.origin.fail(i, i + 1, problem, field);
        };
        bool has_vector = false;
        QueryRecord r = record_from_json(list[i], rules, dim > 0 ? batch.given.data() + i * dim : nullptr, has_vector, fail);
        const auto [it, fresh] = first.emplace(r.id, i);
        if (!fresh)
            fail("id", quote_value(r.id) + " appears twice (first as " + batch.origin.key + "[" + std::to_string(it->second) +
                           "]); ids must be unique");
        r.line = i + 1;
        if (has_vector) batch.has_vector[i] = 1;
        batch.records.push_back(std::move(r));
    }
    if (dim > 0 && std::none_of(batch.has_vector.begin(), batch.has_vector.end(), [](std::uint8_t v) { return v != 0; })) {
        batch.given.clear();
        batch.has_vector.clear();
        batch.dim = 0;
    }
    return batch;
}

PaperFilter filter_from_json(const nlohmann::json& value, const std::string& key) {
    if (value.is_null()) return {};
    return parse_record_filter(value, [&](const std::string& problem) { throw UsageError(key + ": " + problem, key); });
}

}  // namespace novelty
