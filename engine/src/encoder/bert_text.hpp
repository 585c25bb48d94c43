// Text handling of the BERT tokenizer before WordPiece: lossy UTF-8 decoding, Python-style
// lower-casing, BertNormalizer and BertPreTokenizer. All work on UTF-32 code points. Internal to
// the engine (see novelty/encoder/wordpiece.hpp).
//
// Character classes (control, punctuation, nonspacing mark, decomposable) come from
// bert_tables.inc, measured on the reference `tokenizers` library, whose Unicode tables are older
// than utf8proc's; utf8proc supplies NFD mappings, combining classes and case mappings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace novelty::encoder {

/// Decodes UTF-8. Never fails: each maximal invalid subsequence (a stray byte, a truncated
/// sequence, an overlong form, a surrogate, a value above U+10FFFF) becomes one U+FFFD, exactly
/// as Python's bytes.decode("utf-8", "replace").
std::u32string decode_utf8_lossy(std::string_view text);

/// Appends the UTF-8 encoding of `cp` (a valid scalar value) to `out`.
void append_utf8(std::string& out, char32_t cp);
/// The UTF-8 encoding of `text`.
std::string encode_utf8(std::u32string_view text);

/// Python's str.lower(): full lower-case mapping (U+0130 becomes "i" + U+0307) with the
/// Final_Sigma rule for U+03A3. Cased / case-ignorable are approximated from utf8proc's
/// categories and case mappings (see the .cpp).
std::u32string python_lower(std::u32string_view text);

/// BertNormalizer settings.
struct BertNormalizerOptions {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    bool strip_accents = true;
    bool lower_case = true;
};

/// BertNormalizer of the Hugging Face tokenizers library, in its order: clean text, space out
/// CJK ideographs, strip accents (NFD, drop Mn), lower-case (per character, full mapping, so
/// U+0130 becomes "i" + U+0307 and a capital sigma always becomes U+03C3).
std::u32string bert_normalize(std::u32string_view text, const BertNormalizerOptions& options);

/// BertPreTokenizer: splits on whitespace (removed) and isolates each punctuation character.
std::vector<std::u32string> bert_pre_tokenize(std::u32string_view text);

/// Character classes, as the tokenizers library defines them.
bool is_bert_whitespace(char32_t cp);       ///< \t \n \r or Unicode White_Space
bool is_bert_control(char32_t cp);          ///< U+0000, U+FFFD, Cc, Cf, Co except \t \n \r
bool is_bert_punctuation(char32_t cp);      ///< ASCII punctuation or P* category
bool is_bert_nonspacing_mark(char32_t cp);  ///< Mn (as strip_accents sees it, after NFD)
bool is_bert_decomposable(char32_t cp);     ///< NFD changes it
/// The CJK blocks of BERT's _is_chinese_char, as the tokenizers library has them: its
/// extension-E range starts at U+2B920, not U+2B820 as in the Python BertTokenizer.
bool is_cjk_ideograph(char32_t cp);

}  // namespace novelty::encoder
