#include "novelty/request/retrieval_run.hpp"

#include "novelty/util/error.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace novelty {

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

RewritesById read_rewrites_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "cannot open the file");
    RewritesById rewrites;
    std::map<std::string, std::size_t> first_line;
    std::string text;
    std::size_t line = 0;
    while (std::getline(in, text)) {
        ++line;
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        nlohmann::json record;
        try {
            record = parse_json(text);
        } catch (const JsonError& e) {
            throw InputError(path, line, std::string("malformed JSON: ") + e.what());
        }
        if (!record.is_object()) throw InputError(path, line, "expected a JSON object");
        // A line of `novelty retrieve --jsonl` output: the id is "query", the lists are under "rewrites".
        const bool run_output = !record.contains("id") && record.contains("query");
        const auto id_it = record.find(run_output ? "query" : "id");
        if (id_it == record.end() || !(id_it->is_string() || id_it->is_number_integer()))
            throw InputError(path, line, "no \"id\" (a string or an integer)");
        const std::string id = id_it->is_string() ? id_it->get<std::string>() : id_it->dump();
        if (const auto [it, fresh] = first_line.emplace(id, line); !fresh)
            throw InputError(path, line, "duplicate id \"" + id + "\" (first on line " + std::to_string(it->second) + ")");
        const nlohmann::json* lists = &record;
        if (run_output) {
            const auto it = record.find("rewrites");
            if (it == record.end() || !it->is_object())
                throw InputError(path, line, "a retrieve output line without a \"rewrites\" object (run it with --expand or --hyde)");
            lists = &*it;
        }
        QueryRewrites& q = rewrites[id];
        q.expand = string_list(*lists, "expand", path, line);
        q.hyde = string_list(*lists, "hyde", path, line);
        if (const auto errors = record.find("rewrite_errors"); run_output && errors != record.end() && errors->is_object()) {
            if (const auto e = errors->find("expand"); e != errors->end() && e->is_string()) q.expand_error = e->get<std::string>();
            if (const auto e = errors->find("hyde"); e != errors->end() && e->is_string()) q.hyde_error = e->get<std::string>();
        }
    }
    if (in.bad()) throw InputError(path, 0, "read error");
    return rewrites;
}

}  // namespace novelty
