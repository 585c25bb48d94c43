#include "util/message_text.hpp"

#include "io/text_lines.hpp"

#include <cstdio>

namespace novelty {

namespace {

// Length of the valid UTF-8 character starting at text[i], or 0 when the byte there does not
// start one.
std::size_t utf8_char_length(std::string_view text, std::size_t i) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len <= 1 || i + len > text.size()) return len == 1 ? 1 : 0;
    return find_invalid_utf8(text.substr(i, len)) == std::string_view::npos ? len : 0;
}

void append_escaped_byte(std::string& out, unsigned char c) {
    switch (c) {
        case '\n': out += "\\n"; return;
        case '\r': out += "\\r"; return;
        case '\t': out += "\\t"; return;
        default: {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\x%02X", c);
            out += buffer;
        }
    }
}

}  // namespace

std::string clip_for_message(std::string_view text, std::size_t max_bytes) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size() && i < max_bytes) {
        const std::size_t len = utf8_char_length(text, i);
        const auto c = static_cast<unsigned char>(text[i]);
        if (len == 0 || (len == 1 && (c < 0x20 || c == 0x7F))) {
            append_escaped_byte(out, c);
            ++i;
            continue;
        }
        if (i + len > max_bytes) break;  // a character that would cross the limit is left out
        out.append(text.substr(i, len));
        i += len;
    }
    if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

std::string quote_value(std::string_view value, std::size_t max_bytes) {
    std::string out = clip_for_message(value, max_bytes);
    const std::size_t cut = out.rfind("... (");
    if (value.size() > max_bytes && cut != std::string::npos) return "'" + out.substr(0, cut) + "...'" + out.substr(cut + 3);
    return "'" + out + "'";
}

std::string thousands(unsigned long long n) {
    const std::string digits = std::to_string(n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

}  // namespace novelty
