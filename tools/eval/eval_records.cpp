// Reading the JSON Lines files of `novelty eval` (labels, ids, groups).
#include "eval_records.hpp"

#include "novelty/util/error.hpp"
#include "util/message_text.hpp"

#include "io/json/json_parse.hpp"

#include <fstream>
#include <string_view>

namespace novelty::cli {

using nlohmann::json;

void for_each_record(const std::string& path, const std::function<void(const json&, std::size_t)>& fn) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "cannot open the file");
    std::string line;
    std::size_t line_number = 0;
    while (std::getline(in, line)) {
        ++line_number;
        std::string_view text = line;
        if (line_number == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        json record;
        try {
            record = parse_json(text);
        } catch (const JsonError& e) {
            throw InputError(path, line_number, std::string("malformed JSON: ") + e.what());
        }
        if (!record.is_object())
            throw InputError(path, line_number, "expected a JSON object, found " + quote_value(dump_json(record)));
        fn(record, line_number);
    }
    if (in.bad()) throw InputError(path, 0, "read error");
}

/// The record's id: a non-empty string, or an integer written as text.
std::string record_id(const json& record, const std::string& path, std::size_t line) {
    const auto it = record.find("id");
    if (it == record.end() || it->is_null()) throw InputError(path, line, "no \"id\"");
    if (it->is_number_integer()) return it->dump();
    if (!it->is_string()) throw InputError(path, line, "\"id\" is " + json_type_words(*it) + "; expected a string");
    std::string id = it->get<std::string>();
    if (id.empty()) throw InputError(path, line, "\"id\" is empty");
    return id;
}

/// Remembers the line of each id and throws on a duplicate.
void claim_id(std::unordered_map<std::string, std::size_t>& lines, const std::string& id, const std::string& path,
              std::size_t line) {
    const auto [it, fresh] = lines.emplace(id, line);
    if (!fresh)
        throw InputError(path, line, "duplicate id \"" + id + "\" (first on line " + std::to_string(it->second) + ")");
}


namespace {


int parse_label(const json& record, const std::string& path, std::size_t line) {
    const auto it = record.find("label");
    if (it == record.end()) throw InputError(path, line, "no \"label\"");
    if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
    if (it->is_number()) {
        const double v = it->get<double>();
        if (v == 0 || v == 1) return static_cast<int>(v);
    }
    throw InputError(path, line, "\"label\" is " + quote_value(dump_json(*it)) + "; expected 0, 1, true or false");
}

std::string parse_group(const json& record, const std::string& field, const std::string& path, std::size_t line) {
    const auto it = record.find(field);
    if (it == record.end() || it->is_null())
        throw InputError(path, line, "no \"" + field + "\" to group by (--group-by " + field + ")");
    std::string group;
    if (it->is_string()) group = it->get<std::string>();
    else if (it->is_number() || it->is_boolean()) group = it->dump();
    else throw InputError(path, line, "\"" + field + "\" is " + json_type_words(*it) + "; expected a string to group by");
    if (group == overall_group)
        throw InputError(path, line, "the group \"" + group + "\" has the name of the overall group; rename it");
    return group;
}

}  // namespace

std::unordered_map<std::string, Label> read_labels(const std::string& path, const std::string& group_by) {
    std::unordered_map<std::string, Label> labels;
    std::unordered_map<std::string, std::size_t> lines;
    for_each_record(path, [&](const json& record, std::size_t line) {
        std::string id = record_id(record, path, line);
        claim_id(lines, id, path, line);
        Label label;
        label.label = parse_label(record, path, line);
        if (!group_by.empty()) label.group = parse_group(record, group_by, path, line);
        labels.emplace(std::move(id), std::move(label));
    });
    return labels;
}

}  // namespace novelty::cli
