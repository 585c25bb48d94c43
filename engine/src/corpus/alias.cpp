// normalize_alias: the one form in which paper aliases are stored and looked up.
#include "novelty/corpus/corpus.hpp"

#include <utility>

namespace novelty {

std::string normalize_alias(const std::string& name) {
    const auto first = name.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    const auto last = name.find_last_not_of(" \t\r\n");
    std::string out = name.substr(first, last - first + 1);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    static const std::pair<const char*, const char*> prefixes[] = {
        {"https://doi.org/", "doi:"}, {"http://doi.org/", "doi:"}, {"https://dx.doi.org/", "doi:"},
        {"http://dx.doi.org/", "doi:"}, {"https://arxiv.org/abs/", "arxiv:"}, {"http://arxiv.org/abs/", "arxiv:"}};
    for (const auto& [prefix, replacement] : prefixes)
        if (out.rfind(prefix, 0) == 0) return replacement + out.substr(std::string(prefix).size());
    return out;
}

}  // namespace novelty
