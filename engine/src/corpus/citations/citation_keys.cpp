#include "corpus/citations/citation_keys.hpp"

#include "corpus/external_ids.hpp"
#include "novelty/corpus/corpus.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::citations_detail {

namespace {

using nlohmann::json;

bool digits_only(const std::string& s) {
    return !s.empty() && s.size() < 19 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/// `s` without `prefix` (compared case-insensitively); "" when it does not start with it or is
/// nothing more.
std::string after_prefix(const std::string& s, const std::string& prefix) {
    if (s.size() <= prefix.size()) return "";
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return "";
    return s.substr(prefix.size());
}

std::string trimmed(const std::string& given) {
    const auto first = given.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    return given.substr(first, given.find_last_not_of(" \t\r\n") - first + 1);
}

std::string text_of(const nlohmann::ordered_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

CitedKey cited_key_of_text(const std::string& given) {
    const std::string v = trimmed(given);
    if (v.empty()) return {};
    if (const std::string w = after_prefix(v, "https://openalex.org/"); !w.empty()) return {"openalex:" + normalize_alias(w), "OpenAlex", w};
    if (v.size() > 1 && (v[0] == 'W' || v[0] == 'w') && digits_only(v.substr(1))) return {"openalex:" + normalize_alias(v), "OpenAlex", v};
    if (digits_only(v)) return {"corpusid:" + v, "CorpusId", v};
    if (const std::string n = after_prefix(v, "CorpusId:"); digits_only(n)) return {"corpusid:" + n, "CorpusId", n};
    if (const std::string n = after_prefix(v, "PMID:"); !n.empty()) return {"pmid:" + normalize_alias(n), "PubMed", n};
    if (const std::string n = after_prefix(v, "PMCID:"); !n.empty()) {
        const std::string pmc = after_prefix(n, "PMC").empty() ? "PMC" + n : n;
        return {"pmc:" + normalize_alias(pmc), "PubMedCentral", pmc};
    }
    const std::string alias = normalize_alias(v);
    if (alias.rfind("doi:", 0) == 0) return {alias, "DOI", v.substr(v.size() - (alias.size() - 4))};
    if (alias.rfind("10.", 0) == 0) return {"doi:" + alias, "DOI", v};
    if (alias.rfind("arxiv:", 0) == 0) return {alias, "ArXiv", v.substr(v.size() - (alias.size() - 6))};
    if (is_hex40(v)) return {"sha:" + alias, "", ""};
    if (const std::string sha = s2_sha_of_url(v); !sha.empty()) return {"sha:" + sha, "", ""};
    return {alias, "", v};
}

namespace {

CitedKey cited_key_of(const json& r) {
    if (r.is_string()) return cited_key_of_text(r.get<std::string>());
    if (r.is_number_integer() || r.is_number_unsigned()) return cited_key_of_text(r.dump());
    if (!r.is_object()) return {};
    for (const char* key : {"corpusId", "corpusid", "citedcorpusid"})
        if (auto it = r.find(key); it != r.end() && (it->is_number_integer() || it->is_number_unsigned() || it->is_string()))
            return cited_key_of_text(it->is_string() ? it->get<std::string>() : it->dump());
    for (const char* key : {"doi", "DOI", "paperId", "id"})
        if (auto it = r.find(key); it != r.end() && it->is_string()) return cited_key_of_text(it->get<std::string>());
    return {};
}

}  // namespace

std::vector<CitedKey> references_of(const json& extra) {
    std::vector<CitedKey> out;
    if (!extra.is_object()) return out;
    for (const char* key : {"referenced_works", "references"}) {
        auto it = extra.find(key);
        if (it == extra.end() || !it->is_array()) continue;
        for (const auto& r : *it)
            if (CitedKey ref = cited_key_of(r); !ref.key.empty()) out.push_back(std::move(ref));
        break;
    }
    return out;
}

std::vector<std::string> keys_of_paper(const Paper& paper, const json& extra, const std::string& format) {
    std::vector<std::string> keys{normalize_alias(paper.id)};
    const nlohmann::ordered_json ids = external_ids(paper, extra, format);
    if (ids.contains("DOI")) keys.push_back("doi:" + normalize_alias(text_of(ids["DOI"])));
    if (ids.contains("ArXiv")) keys.push_back("arxiv:" + normalize_alias(text_of(ids["ArXiv"])));
    if (ids.contains("PubMed")) keys.push_back("pmid:" + normalize_alias(text_of(ids["PubMed"])));
    if (ids.contains("PubMedCentral")) keys.push_back(cited_key_of_text("PMCID:" + text_of(ids["PubMedCentral"])).key);
    if (ids.contains("CorpusId")) keys.push_back("corpusid:" + text_of(ids["CorpusId"]));
    const json* openalex = find_key(extra, {"openalex"});
    for (const std::string& given : {paper.id, openalex && openalex->is_string() ? openalex->get<std::string>() : std::string()})
        if (const CitedKey r = cited_key_of_text(given); r.id_kind == "OpenAlex") keys.push_back(r.key);
    if (const json* url = find_key(extra, {"url"}); url && url->is_string())
        if (const std::string sha = s2_sha_of_url(url->get<std::string>()); !sha.empty()) keys.push_back("sha:" + sha);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    keys.erase(std::remove(keys.begin(), keys.end(), std::string()), keys.end());
    return keys;
}

std::string shared_format(const std::vector<std::string>& formats) {
    if (formats.empty()) return "";
    for (const std::string& f : formats)
        if (f != formats.front()) return "";
    return formats.front();
}

}  // namespace novelty::citations_detail
