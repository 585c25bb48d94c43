#include "io/json/json_parse.hpp"
#include "novelty/util/error.hpp"
#include "llm/json_answer.hpp"

#include <cctype>

namespace novelty::host::detail {

std::optional<std::string> parse_answer_object(const std::string& content, nlohmann::json& out) {
    const auto open = content.find('{');
    const auto close = content.rfind('}');
    if (open == std::string::npos || close == std::string::npos || close < open) return "the answer holds no JSON object";
    const std::string before = content.substr(0, open), after = content.substr(close + 1);
    auto only_fence = [](const std::string& s) {
        for (char c : s)
            if (!std::isspace(static_cast<unsigned char>(c)) && c != '`' && std::string("json").find(c) == std::string::npos)
                return false;
        return true;
    };
    if (!only_fence(before) || !only_fence(after)) return "the answer holds text besides the JSON object";
    try {
        out = parse_json(std::string_view(content).substr(open, close - open + 1));
    } catch (const JsonError& e) {
        return std::string("the answer is not valid JSON: ") + e.what();
    }
    if (!out.is_object()) return "the answer is not a JSON object";
    return std::nullopt;
}

}  // namespace novelty::host::detail

namespace novelty::host::detail {

bool has_word(const std::string& text) {
    static const std::string ellipsis = "\xE2\x80\xA6";  // U+2026, a placeholder too
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, ellipsis.size(), ellipsis) == 0) {
            i += ellipsis.size() - 1;
            continue;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (std::isalnum(c) || c >= 0x80) return true;
    }
    return false;
}

}  // namespace novelty::host::detail
