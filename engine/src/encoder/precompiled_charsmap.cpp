#include "encoder/precompiled_charsmap.hpp"

#include "encoder/bert_text.hpp"
#include "novelty/util/error.hpp"

#include <utf8proc.h>

#include <cstring>

namespace novelty::encoder {

std::string decode_base64(std::string_view text, const std::string& source) {
    std::string out;
    out.reserve(text.size() / 4 * 3);
    std::uint32_t accumulator = 0;
    int bits = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '=') {
            if (text.find_first_not_of('=', i) != std::string_view::npos)
                throw InputError(source, 0, "precompiled_charsmap: '=' before the end of the base64 text");
            break;
        }
        int digit;
        if (c >= 'A' && c <= 'Z') digit = c - 'A';
        else if (c >= 'a' && c <= 'z') digit = c - 'a' + 26;
        else if (c >= '0' && c <= '9') digit = c - '0' + 52;
        else if (c == '+') digit = 62;
        else if (c == '/') digit = 63;
        else throw InputError(source, 0, "precompiled_charsmap: invalid base64 character at offset " + std::to_string(i));
        accumulator = (accumulator << 6) | static_cast<std::uint32_t>(digit);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((accumulator >> bits) & 0xff));
        }
    }
    return out;
}

PrecompiledCharsmap PrecompiledCharsmap::parse(const std::string& blob, const std::string& source) {
    if (blob.size() < 4) throw InputError(source, 0, "precompiled_charsmap: shorter than its 4-byte header");
    const auto* b = reinterpret_cast<const unsigned char*>(blob.data());
    const std::uint32_t trie_bytes = b[0] | (b[1] << 8) | (b[2] << 16) | (std::uint32_t(b[3]) << 24);
    if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > blob.size() - 4)
        throw InputError(source, 0, "precompiled_charsmap: its trie size " + std::to_string(trie_bytes) +
                                        " does not fit the " + std::to_string(blob.size()) + "-byte blob");
    PrecompiledCharsmap map;
    map.units_.resize(trie_bytes / 4);
    for (std::size_t i = 0; i < map.units_.size(); ++i) {
        const unsigned char* u = b + 4 + 4 * i;
        map.units_[i] = u[0] | (u[1] << 8) | (u[2] << 16) | (std::uint32_t(u[3]) << 24);
    }
    map.pool_ = blob.substr(4 + trie_bytes);
    return map;
}

PrecompiledCharsmap PrecompiledCharsmap::parse_base64(std::string_view base64, const std::string& source) {
    return parse(decode_base64(base64, source), source);
}

namespace {

// Darts-clone double-array unit fields.
std::uint32_t unit_offset(std::uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }
std::uint32_t unit_label(std::uint32_t unit) { return unit & ((1u << 31) | 0xffu); }
bool unit_has_leaf(std::uint32_t unit) { return ((unit >> 8) & 1u) != 0; }
std::uint32_t unit_value(std::uint32_t unit) { return unit & ((1u << 31) - 1); }

}  // namespace

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view bytes) const {
    std::size_t node = unit_offset(units_[0]);
    for (const char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == 0) break;
        node ^= c;
        if (node >= units_.size()) return std::nullopt;
        const std::uint32_t unit = units_[node];
        if (unit_label(unit) != c) return std::nullopt;
        node ^= unit_offset(unit);
        if (node >= units_.size()) return std::nullopt;
        if (unit_has_leaf(unit)) {
            const std::size_t start = unit_value(units_[node]);
            if (start >= pool_.size()) return std::nullopt;
            const std::size_t end = pool_.find('\0', start);
            return std::string_view(pool_).substr(start, (end == std::string::npos ? pool_.size() : end) - start);
        }
    }
    return std::nullopt;
}

std::string PrecompiledCharsmap::normalize(std::string_view text) const {
    const std::u32string cps = decode_utf8_lossy(text);
    std::string out;
    out.reserve(text.size());
    std::int32_t state = 0;
    std::size_t begin = 0;
    std::string cluster;
    for (std::size_t i = 0; i < cps.size(); ++i) {
        const bool last = i + 1 == cps.size();
        if (!last && !utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(cps[i]),
                                                       static_cast<utf8proc_int32_t>(cps[i + 1]), &state))
            continue;
        cluster = encode_utf8(std::u32string_view(cps).substr(begin, i + 1 - begin));
        if (cluster.size() < 6) {
            if (const auto whole = transform(cluster)) {
                out += *whole;
                begin = i + 1;
                continue;
            }
        }
        for (std::size_t k = begin; k <= i; ++k) {
            std::string one;
            append_utf8(one, cps[k]);
            const auto replacement = transform(one);
            out += replacement ? std::string(*replacement) : one;
        }
        begin = i + 1;
    }
    return out;
}

}  // namespace novelty::encoder
