#include "encoder/bert_text.hpp"

#include "encoder/bert_tables.inc"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace novelty::encoder {

namespace {

constexpr char32_t replacement_char = 0xFFFD;

utf8proc_category_t category(char32_t cp) {
    return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

/// Whether `cp` lies in one of the sorted, disjoint `ranges`.
template <std::size_t N>
bool in_table(const tables::CodeRange (&ranges)[N], char32_t cp) {
    const auto* it = std::upper_bound(std::begin(ranges), std::end(ranges), cp,
                                      [](char32_t value, const tables::CodeRange& r) { return value < r.first; });
    return it != std::begin(ranges) && cp <= (it - 1)->last;
}

/// Simple (one code point) lower-case mapping, from the measured table.
char32_t simple_lower(char32_t cp) {
    const auto* it = std::upper_bound(std::begin(tables::lower_case), std::end(tables::lower_case), cp,
                                      [](char32_t value, const tables::LowerRun& r) { return value < r.first; });
    if (it == std::begin(tables::lower_case)) return cp;
    const tables::LowerRun& run = *(it - 1);
    if (cp > run.last || (cp - run.first) % static_cast<char32_t>(run.stride) != 0) return cp;
    return static_cast<char32_t>(static_cast<std::int64_t>(cp) + run.delta);
}

/// Appends the full lower-case mapping of `cp`. U+0130 is the one code point whose
/// unconditional mapping (SpecialCasing.txt) is longer than one code point.
void append_lower(std::u32string& out, char32_t cp) {
    if (cp == 0x0130) {
        out += U'i';
        out += char32_t{0x0307};
    } else {
        out += simple_lower(cp);
    }
}

/// Unicode "Cased" (Lowercase, Uppercase or Lt): a cased-letter category, a character with a
/// case mapping (which covers the circled letters and Roman numerals), or one of the
/// Other_Lowercase / Other_Uppercase characters without either (the ordinal indicators and the
/// squared and negative circled Latin capitals). Matches Python 3.11 for every code point that
/// Unicode 14 assigns.
bool is_cased(char32_t cp) {
    if (cp == 0xAA || cp == 0xBA || (cp >= 0x1F130 && cp <= 0x1F149) || (cp >= 0x1F150 && cp <= 0x1F169) ||
        (cp >= 0x1F170 && cp <= 0x1F189)) {
        return true;
    }
    switch (category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
        return true;
    default:
        break;
    }
    const auto c = static_cast<utf8proc_int32_t>(cp);
    return utf8proc_tolower(c) != c || utf8proc_toupper(c) != c;
}

/// Unicode "Case_Ignorable": Mn, Me, Cf, Lm, Sk, or Word_Break MidLetter / MidNumLet /
/// Single_Quote (the common members of those are listed).
bool is_case_ignorable(char32_t cp) {
    switch (category(cp)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
        return true;
    default:
        break;
    }
    static constexpr std::array<char32_t, 15> mid = {
        0x0027, 0x002E, 0x003A, 0x00B7, 0x0387, 0x055F, 0x05F4, 0x2018,
        0x2019, 0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07};
    return std::find(mid.begin(), mid.end(), cp) != mid.end() || cp == 0xFF0E || cp == 0xFF1A;
}

/// Python's Final_Sigma test for the capital sigma at text[i].
bool is_final_sigma(std::u32string_view text, std::size_t i) {
    std::size_t j = i;
    while (j > 0 && is_case_ignorable(text[j - 1])) --j;
    if (j == 0 || !is_cased(text[j - 1])) return false;
    std::size_t k = i + 1;
    while (k < text.size() && is_case_ignorable(text[k])) ++k;
    return k == text.size() || !is_cased(text[k]);
}

/// Canonical decomposition of one code point appended to `out` (no reordering).
void append_nfd(std::u32string& out, char32_t cp) {
    std::array<utf8proc_int32_t, 32> buffer{};
    int boundclass = 0;
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buffer.data(),
                                           static_cast<utf8proc_ssize_t>(buffer.size()),
                                           UTF8PROC_DECOMPOSE, &boundclass);
    if (n < 0 || n > static_cast<utf8proc_ssize_t>(buffer.size())) {
        out += cp;  // cannot happen for a scalar value; keep the character as it is
        return;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) out += static_cast<char32_t>(buffer[static_cast<std::size_t>(k)]);
}

int combining_class(char32_t cp) {
    return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

/// Canonical ordering: each run of non-starters is sorted stably by combining class.
void canonical_order(std::u32string& text) {
    std::size_t i = 0;
    while (i < text.size()) {
        if (combining_class(text[i]) == 0) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && combining_class(text[end]) != 0) ++end;
        if (end - i > 1) {
            std::stable_sort(text.begin() + static_cast<std::ptrdiff_t>(i),
                             text.begin() + static_cast<std::ptrdiff_t>(end),
                             [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
        }
        i = end;
    }
}

/// Length of the UTF-8 sequence a lead byte announces and the allowed range of its second
/// byte (Unicode Table 3-7); length 0 for a byte that cannot start a sequence.
struct LeadInfo {
    int length;
    unsigned char low;
    unsigned char high;
};

LeadInfo lead_info(unsigned char c) {
    if (c >= 0xC2 && c <= 0xDF) return {2, 0x80, 0xBF};
    if (c == 0xE0) return {3, 0xA0, 0xBF};
    if (c == 0xED) return {3, 0x80, 0x9F};
    if (c >= 0xE1 && c <= 0xEF) return {3, 0x80, 0xBF};
    if (c == 0xF0) return {4, 0x90, 0xBF};
    if (c >= 0xF1 && c <= 0xF3) return {4, 0x80, 0xBF};
    if (c == 0xF4) return {4, 0x80, 0x8F};
    return {0, 0, 0};
}

}  // namespace

std::u32string decode_utf8_lossy(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::u32string out;
    out.reserve(n);
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) {
            out += static_cast<char32_t>(c);
            ++i;
            continue;
        }
        const LeadInfo info = lead_info(c);
        if (info.length == 0) {
            out += replacement_char;
            ++i;
            continue;
        }
        char32_t cp = c & (info.length == 2 ? 0x1F : info.length == 3 ? 0x0F : 0x07);
        std::size_t k = 1;
        bool complete = true;
        for (; k < static_cast<std::size_t>(info.length); ++k) {
            if (i + k >= n) {
                complete = false;
                break;
            }
            const unsigned char b = s[i + k];
            const unsigned char low = k == 1 ? info.low : 0x80;
            const unsigned char high = k == 1 ? info.high : 0xBF;
            if (b < low || b > high) {
                complete = false;
                break;
            }
            cp = (cp << 6) | (b & 0x3F);
        }
        // An incomplete sequence is one maximal subpart: one U+FFFD for the bytes consumed.
        out += complete ? cp : replacement_char;
        i += k;
    }
    return out;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string encode_utf8(std::u32string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char32_t cp : text) append_utf8(out, cp);
    return out;
}

std::u32string python_lower(std::u32string_view text) {
    std::u32string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == 0x03A3) {
            out += is_final_sigma(text, i) ? char32_t{0x03C2} : char32_t{0x03C3};
        } else {
            append_lower(out, text[i]);
        }
    }
    return out;
}

bool is_bert_whitespace(char32_t cp) {
    // Unicode White_Space (PropList.txt); it includes \t \n \r.
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

bool is_bert_control(char32_t cp) { return in_table(tables::control, cp); }

bool is_bert_punctuation(char32_t cp) { return in_table(tables::punctuation, cp); }

bool is_bert_nonspacing_mark(char32_t cp) { return in_table(tables::nonspacing_mark, cp); }

bool is_bert_decomposable(char32_t cp) { return in_table(tables::decomposable, cp); }

bool is_cjk_ideograph(char32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::u32string bert_normalize(std::u32string_view text, const BertNormalizerOptions& options) {
    std::u32string current;
    current.reserve(text.size() + 8);
    for (const char32_t cp : text) {
        if (options.clean_text) {
            if (is_bert_control(cp)) continue;
            if (is_bert_whitespace(cp)) {
                current += U' ';
                continue;
            }
        }
        if (options.handle_chinese_chars && is_cjk_ideograph(cp)) {
            current += U' ';
            current += cp;
            current += U' ';
            continue;
        }
        current += cp;
    }
    if (options.strip_accents) {
        std::u32string decomposed;
        decomposed.reserve(current.size() + 8);
        for (const char32_t cp : current) {
            if (is_bert_decomposable(cp)) {
                append_nfd(decomposed, cp);
            } else {
                decomposed += cp;
            }
        }
        canonical_order(decomposed);
        current.clear();
        for (const char32_t cp : decomposed) {
            if (!is_bert_nonspacing_mark(cp)) current += cp;
        }
    }
    if (options.lower_case) {
        std::u32string lowered;
        lowered.reserve(current.size());
        for (const char32_t cp : current) append_lower(lowered, cp);
        current = std::move(lowered);
    }
    return current;
}

std::vector<std::u32string> bert_pre_tokenize(std::u32string_view text) {
    std::vector<std::u32string> words;
    std::u32string word;
    for (const char32_t cp : text) {
        if (is_bert_whitespace(cp)) {
            if (!word.empty()) words.push_back(std::move(word));
            word.clear();
        } else if (is_bert_punctuation(cp)) {
            if (!word.empty()) words.push_back(std::move(word));
            word.clear();
            words.emplace_back(1, cp);
        } else {
            word += cp;
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    return words;
}

}  // namespace novelty::encoder
