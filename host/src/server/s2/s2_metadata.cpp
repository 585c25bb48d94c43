#include "server/s2/s2_metadata.hpp"
#include "server/paper_ids.hpp"

#include <cctype>
#include <string_view>

namespace novelty::host::s2 {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;


template <class Json>
std::string text_of(const Json* v) {
    if (!v) return "";
    if (v->is_string()) return v->template get<std::string>();
    if (v->is_number_integer() || v->is_number_unsigned()) return v->dump();
    return "";
}

std::string trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
}

/// "A and B", "A, B" or "A; B" -> the names.
std::vector<Author> split_names(const std::string& names) {
    std::vector<Author> out;
    std::string rest = names;
    for (const std::string sep : {" and ", ";"})
        for (std::size_t at; (at = rest.find(sep)) != std::string::npos;) rest.replace(at, sep.size(), ",");
    std::size_t start = 0;
    while (start <= rest.size()) {
        const std::size_t comma = std::min(rest.find(',', start), rest.size());
        const std::string name = trimmed(std::string_view(rest).substr(start, comma - start));
        if (!name.empty()) out.push_back({name, ""});
        start = comma + 1;
    }
    return out;
}

std::vector<Author> from_list(const json& list) {
    std::vector<Author> out;
    for (const auto& a : list) {
        if (a.is_string()) {
            if (!trimmed(a.get<std::string>()).empty()) out.push_back({trimmed(a.get<std::string>()), ""});
        } else if (a.is_object()) {
            const std::string name = trimmed(text_of(find_key(a, {"name", "display_name"})));
            if (!name.empty()) out.push_back({name, text_of(find_key(a, {"authorId", "authorid", "id"}))});
        }
    }
    return out;
}

std::vector<Author> from_parsed(const json& list) {  // [[last, first, suffix], ...]
    std::vector<Author> out;
    for (const auto& a : list) {
        if (!a.is_array() || a.empty() || !a[0].is_string()) continue;
        std::string name = a.size() > 1 && a[1].is_string() ? trimmed(a[1].get<std::string>()) : "";
        const std::string last = trimmed(a[0].get<std::string>());
        name = name.empty() ? last : name + " " + last;
        if (!name.empty()) out.push_back({name, ""});
    }
    return out;
}

std::string openalex_short(const std::string& id) {
    const std::string prefix = "https://openalex.org/";
    return id.rfind(prefix, 0) == 0 ? id.substr(prefix.size()) : id;
}

std::vector<Author> from_authorships(const json& list) {
    std::vector<Author> out;
    for (const auto& a : list) {
        const json* author = a.is_object() ? find_key(a, {"author"}) : nullptr;
        if (!author || !author->is_object()) continue;
        const std::string name = trimmed(text_of(find_key(*author, {"display_name", "name"})));
        if (!name.empty()) out.push_back({name, openalex_short(text_of(find_key(*author, {"id"})))});
    }
    return out;
}

std::string escaped(const std::string& value) {
    std::string out;
    for (const char c : value) {
        if (c == '{' || c == '}' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

std::string key_part(const std::string& word) {
    std::string out;
    for (const char c : word)
        if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string citation_key(const Paper& paper, const std::vector<Author>& authors) {
    std::string key = "paper";
    if (!authors.empty()) {
        const std::string& name = authors.front().name;
        const std::string last = key_part(name.substr(name.find_last_of(' ') == std::string::npos ? 0 : name.find_last_of(' ') + 1));
        if (!last.empty()) key = last;
    }
    if (paper.year) key += std::to_string(*paper.year);
    std::size_t start = 0;
    const std::string& t = paper.title;
    while (start < t.size()) {
        std::size_t end = start;
        while (end < t.size() && !std::isspace(static_cast<unsigned char>(t[end]))) ++end;
        const std::string word = key_part(t.substr(start, end - start));
        if (word.size() >= 4) return key + word;
        start = end + 1;
    }
    return key;
}

}  // namespace

std::vector<Author> authors_of(const nlohmann::json& extra) {
    if (const json* a = find_key(extra, {"authors"})) {
        if (a->is_array()) return from_list(*a);
        if (a->is_string()) return split_names(a->get<std::string>());
    }
    if (const json* a = find_key(extra, {"authors_parsed"}); a && a->is_array()) return from_parsed(*a);
    if (const json* a = find_key(extra, {"authorships"}); a && a->is_array()) return from_authorships(*a);
    return {};
}

std::string url_of(const nlohmann::json& extra, const nlohmann::ordered_json& ids) {
    const std::string url = text_of(find_key(extra, {"url"}));
    if (!url.empty()) return url;
    const auto id = [&](const char* key) { return ids.contains(key) ? text_of(&ids[key]) : std::string(); };
    if (!id("DOI").empty()) return "https://doi.org/" + id("DOI");
    if (!id("ArXiv").empty()) return "https://arxiv.org/abs/" + id("ArXiv");
    if (!id("PubMed").empty()) return "https://pubmed.ncbi.nlm.nih.gov/" + id("PubMed") + "/";
    return "";
}

std::string bibtex(const Paper& paper, const std::vector<Author>& authors, const nlohmann::ordered_json& ids,
                   const nlohmann::json& extra) {
    const bool journal = find_key(extra, {"journal"}) != nullptr || paper.venue.empty();
    std::string entry = std::string(journal ? "@article{" : "@inproceedings{") + citation_key(paper, authors) + ",\n";
    const auto field = [&entry](const char* name, const std::string& value) {
        if (!value.empty()) entry += std::string(" ") + name + " = {" + escaped(value) + "},\n";
    };
    std::string names;
    for (const Author& a : authors) names += (names.empty() ? "" : " and ") + a.name;
    field("title", paper.title);
    field("author", names);
    field(journal ? "journal" : "booktitle", paper.venue);
    field("year", paper.year ? std::to_string(*paper.year) : "");
    field("doi", ids.contains("DOI") ? text_of(&ids["DOI"]) : "");
    if (entry.size() >= 2 && entry[entry.size() - 2] == ',') entry.erase(entry.size() - 2, 1);
    return entry + "}";
}

}  // namespace novelty::host::s2
