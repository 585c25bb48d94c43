#include "novelty/io/query_records.hpp"

#include "io/jsonl.hpp"
#include "io/json/record_filter.hpp"
#include "novelty/util/message_text.hpp"
#include "novelty/util/error.hpp"

#include <unordered_map>

namespace novelty {

bool is_blank(std::string_view text) { return text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos; }

std::vector<QueryRecord> read_query_records(const std::string& path) {
    JsonlReader reader(path);
    nlohmann::json j;
    std::vector<QueryRecord> records;
    std::unordered_map<std::string, std::size_t> line_of_id;
    while (reader.next(j)) {
        const std::size_t line = reader.line_number();
        auto fail = [&](const std::string& problem) { throw InputError(path, line, problem); };
        QueryRecord r;
        r.line = line;
        auto id = j.find("id");
        if (id == j.end() || id->is_null()) fail("missing 'id': every record needs an id");
        if (id->is_string()) r.id = id->get<std::string>();
        else if (id->is_number_integer() || id->is_number_unsigned()) r.id = id->dump();
        else fail("'id' must be a string or an integer, found " + json_type_words(*id));
        if (r.id.empty()) fail("'id' is empty");
        auto [it, fresh] = line_of_id.emplace(r.id, line);
        if (!fresh) fail("duplicate id " + quote_value(r.id) + " (first at line " + std::to_string(it->second) + ")");
        auto text_of = [&](const char* key) -> std::string {
            auto v = j.find(key);
            if (v == j.end() || v->is_null()) return {};
            if (!v->is_string()) fail(std::string("'") + key + "' must be a string, found " + json_type_words(*v));
            std::string value = v->get<std::string>();
            return is_blank(value) ? std::string() : value;
        };
        r.title = text_of("title");
        r.text = text_of("text");
        if (r.text.empty()) r.text = text_of("abstract");
        const std::string date = text_of("date");
        if (!date.empty()) {
            r.date = parse_date(date);
            if (!r.date) fail("unparseable date " + quote_value(date) + " (expected YYYY, YYYY-MM or YYYY-MM-DD)");
        }
        const auto id_array = [&](const char* key, std::vector<std::string>& out) {
            auto list = j.find(key);
            if (list == j.end() || list->is_null()) return false;
            if (!list->is_array()) fail(std::string("'") + key + "' must be an array of paper ids, found " + json_type_words(*list));
            for (const auto& e : *list) {
                if (e.is_string()) out.push_back(e.get<std::string>());
                else if (e.is_number_integer()) out.push_back(e.dump());
                else fail(std::string("'") + key + "' must hold paper ids (strings), found " + json_type_words(e));
            }
            return true;
        };
        id_array("exclude", r.exclude);
        std::vector<std::string> pool;
        if (id_array("pool", pool)) {
            if (pool.empty()) fail("'pool' is empty: name at least one paper, or leave it out");
            r.pool = std::move(pool);
        }
        if (auto filter = j.find("filter"); filter != j.end()) r.filter = parse_record_filter(*filter, fail);
        records.push_back(std::move(r));
    }
    if (records.empty()) throw InputError(path, 0, "the file holds no records");
    return records;
}

PartialDate parse_cutoff(const std::string& text, const std::string& parameter) {
    auto date = parse_date(text);
    if (!date) throw UsageError("'" + text + "' is not a date (expected YYYY, YYYY-MM or YYYY-MM-DD)", parameter);
    return *date;
}

}  // namespace novelty
