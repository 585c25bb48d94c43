#include "server/paper_ids.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace novelty::host {

namespace {

bool starts_with_nocase(const std::string& s, std::string_view prefix) {
    return s.size() > prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string corpus_format(const CorpusManifest& manifest) {
    const auto& sources = manifest.sources;
    if (sources.empty()) return "";
    const bool shared = std::all_of(sources.begin(), sources.end(),
                                    [&](const SourceInfo& s) { return s.format == sources.front().format; });
    return shared ? sources.front().format : "";
}

IdLookup paper_id_lookup(const std::string& id) {
    IdLookup out;
    if (id.empty()) return out;
    out.keys.push_back(id);
    if (is_hex40(id)) out.s2_sha = lower(id);
    if (starts_with_nocase(id, "PMCID:")) {
        const std::string pmc = id.substr(6);
        out.keys.push_back("pmc:" + (starts_with_nocase(pmc, "pmc") ? pmc : "PMC" + pmc));
    }
    if (starts_with_nocase(id, "URL:")) {
        const std::string url = id.substr(4);
        out.keys.push_back(url);
        out.s2_sha = s2_sha_of_url(url);
    }
    return out;
}

}  // namespace novelty::host
