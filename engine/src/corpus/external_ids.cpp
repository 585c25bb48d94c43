#include "corpus/external_ids.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace novelty {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string text_of(const json* v) {
    if (!v) return "";
    if (v->is_string()) return v->get<std::string>();
    if (v->is_number_integer() || v->is_number_unsigned()) return v->dump();
    return "";
}

bool starts_with_nocase(const std::string& s, std::string_view prefix) {
    return s.size() > prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
}

std::string without_prefix(const std::string& s, std::initializer_list<const char*> prefixes) {
    for (const char* p : prefixes)
        if (starts_with_nocase(s, p)) return s.substr(std::string_view(p).size());
    return s;
}

void set_if_absent(ordered_json& ids, const char* key, const std::string& value) {
    if (!value.empty() && !ids.contains(key)) ids[key] = value;
}

/// The record's own externalids object, null values left out.
ordered_json given_ids(const json& extra) {
    ordered_json ids = ordered_json::object();
    if (const json* given = find_key(extra, {"externalids", "externalIds"}); given && given->is_object()) {
        for (const auto& [key, value] : given->items()) {
            if (value.is_string() && !value.get<std::string>().empty()) ids[key] = value.get<std::string>();
            else if (value.is_number_integer()) ids[key] = value.get<long long>();
        }
    }
    return ids;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

bool is_hex40(const std::string& s) {
    return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

const json* find_key(const json& extra, std::initializer_list<const char*> keys) {
    if (!extra.is_object()) return nullptr;
    for (const char* key : keys) {
        auto it = extra.find(key);
        if (it != extra.end() && !it->is_null()) return &*it;
    }
    return nullptr;
}

nlohmann::ordered_json external_ids(const Paper& paper, const nlohmann::json& extra, const std::string& format) {
    ordered_json ids = given_ids(extra);
    const std::string& id = paper.id;
    std::string doi = text_of(find_key(extra, {"doi"}));
    if (doi.empty() && starts_with_nocase(id, "doi:")) doi = id;
    set_if_absent(ids, "DOI", without_prefix(doi, {"https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                                                   "http://dx.doi.org/", "doi:"}));
    set_if_absent(ids, "PubMed", text_of(find_key(extra, {"pmid"})));
    if (starts_with_nocase(id, "pmid:")) set_if_absent(ids, "PubMed", id.substr(5));
    set_if_absent(ids, "PubMedCentral", text_of(find_key(extra, {"pmc", "pmcid"})));
    set_if_absent(ids, "ArXiv", text_of(find_key(extra, {"arxiv_id", "arxiv"})));
    if (starts_with_nocase(id, "arxiv:")) set_if_absent(ids, "ArXiv", id.substr(6));
    if (find_key(extra, {"versions"}) && find_key(extra, {"categories"})) set_if_absent(ids, "ArXiv", id);
    if (ids.contains("CorpusId") && ids["CorpusId"].is_string()) {  // the API answers it as a number
        const std::string given = ids["CorpusId"].get<std::string>();
        if (!given.empty() && given.size() < 19 && given.find_first_not_of("0123456789") == std::string::npos)
            ids["CorpusId"] = std::stoll(given);
    }
    if (format == "s2" && !ids.contains("CorpusId")) {
        const bool digits = !id.empty() && id.size() < 19 && id.find_first_not_of("0123456789") == std::string::npos;
        ids["CorpusId"] = digits ? ordered_json(std::stoll(id)) : ordered_json(id);
    }
    if (format == "pubmed") set_if_absent(ids, "PubMed", id);
    if (format == "arxiv") set_if_absent(ids, "ArXiv", id);
    return ids;
}

std::string s2_sha_of_url(const std::string& url) {
    const std::string l = lower(url);
    const std::size_t at = l.find("semanticscholar.org/paper/");
    if (at == std::string::npos) return "";
    std::string rest = l.substr(at + 26);
    rest = rest.substr(0, rest.find_first_of("?#"));
    while (!rest.empty() && rest.back() == '/') rest.pop_back();
    const std::size_t slash = rest.find_last_of('/');
    const std::string tail = slash == std::string::npos ? rest : rest.substr(slash + 1);
    return is_hex40(tail) ? tail : "";
}

}  // namespace novelty
