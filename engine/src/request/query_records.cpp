#include "novelty/request/query_records.hpp"

#include "io/jsonl.hpp"
#include "request/json/record_json.hpp"
#include "util/message_text.hpp"
#include "novelty/util/error.hpp"

#include <unordered_map>

namespace novelty {

bool is_blank(std::string_view text) { return text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos; }

std::vector<QueryRecord> read_query_records(const std::string& path) {
    JsonlReader reader(path);
    nlohmann::json j;
    std::vector<QueryRecord> records;
    std::unordered_map<std::string, std::size_t> line_of_id;
    RecordJsonRules rules;
    rules.pool = true;
    bool has_vector = false;
    while (reader.next(j)) {
        const std::size_t line = reader.line_number();
        const RecordFail fail = [&](const std::string&, const std::string& problem) { throw InputError(path, line, problem); };
        QueryRecord r = record_from_json(j, rules, nullptr, has_vector, fail);
        r.line = line;
        auto [it, fresh] = line_of_id.emplace(r.id, line);
        if (!fresh) fail("id", "duplicate id " + quote_value(r.id) + " (first at line " + std::to_string(it->second) + ")");
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
