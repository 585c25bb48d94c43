#include "rewrites_file.hpp"

#include "novelty/error.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace novelty::cli {

namespace {

std::vector<std::string> string_list(const nlohmann::json& record, const char* key, const std::string& path,
                                     std::size_t line) {
    std::vector<std::string> texts;
    const auto it = record.find(key);
    if (it == record.end() || it->is_null()) return texts;
    if (!it->is_array()) throw InputError(path, line, std::string("\"") + key + "\" must be an array of strings");
    for (const auto& value : *it) {
        if (!value.is_string()) throw InputError(path, line, std::string("\"") + key + "\" must hold only strings");
        texts.push_back(value.get<std::string>());
    }
    return texts;
}

}  // namespace

std::map<std::string, QueryRewrites> read_rewrites_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "cannot open the file");
    std::map<std::string, QueryRewrites> rewrites;
    std::map<std::string, std::size_t> first_line;
    std::string text;
    std::size_t line = 0;
    while (std::getline(in, text)) {
        ++line;
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        nlohmann::json record;
        try {
            record = nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error&) {
            throw InputError(path, line, "malformed JSON");
        }
        if (!record.is_object()) throw InputError(path, line, "expected a JSON object");
        const auto id_it = record.find("id");
        if (id_it == record.end() || !(id_it->is_string() || id_it->is_number_integer()))
            throw InputError(path, line, "no \"id\" (a string or an integer)");
        const std::string id = id_it->is_string() ? id_it->get<std::string>() : id_it->dump();
        if (const auto [it, fresh] = first_line.emplace(id, line); !fresh)
            throw InputError(path, line, "duplicate id \"" + id + "\" (first on line " + std::to_string(it->second) + ")");
        rewrites[id] = QueryRewrites{string_list(record, "expand", path, line), string_list(record, "hyde", path, line)};
    }
    if (in.bad()) throw InputError(path, 0, "read error");
    return rewrites;
}

}  // namespace novelty::cli
