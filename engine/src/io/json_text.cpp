#include "io/json_text.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <cmath>

namespace novelty::json_text {

void append_string(std::string& out, std::string_view text) {
    // Printable ASCII other than '"' and '\' is written as it is; anything else goes through
    // nlohmann's own escaping, so the bytes are always dump()'s.
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
            out += nlohmann::json(std::string(text)).dump();
            return;
        }
    }
    out += '"';
    out += text;
    out += '"';
}

void append_number(std::string& out, double value) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    std::array<char, 64> buffer{};
    char* end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    out.append(buffer.data(), end);
}

void append_count(std::string& out, std::size_t value) {
    std::array<char, 24> buffer{};
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    out.append(buffer.data(), result.ptr);
}

}  // namespace novelty::json_text
