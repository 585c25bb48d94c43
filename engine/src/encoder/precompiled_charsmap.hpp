// SentencePiece's "precompiled charsmap" normaliser (the Hugging Face tokenizers "Precompiled"
// normalizer, e.g. XLM-RoBERTa's nmt_nfkc rules): a double-array trie over UTF-8 bytes whose
// values are offsets of NUL-terminated replacement strings. Internal to the engine.
//
// Blob layout: u32 little-endian trie size in bytes, then that many bytes of u32 trie units,
// then the pool of replacement strings.
//
// normalize() follows the reference tokenizers library exactly, quirks included: the text is cut
// into extended grapheme clusters (utf8proc's rules); a cluster shorter than 6 bytes is looked up
// whole, and when some prefix of it has a rule, the whole cluster is replaced by the replacement
// of the SHORTEST matching prefix; otherwise each code point is looked up alone (again the
// shortest matching prefix, i.e. the code point itself) and kept when it has no rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace novelty::encoder {

class PrecompiledCharsmap {
public:
    /// Parses a raw blob; throws InputError naming `source` when it is malformed.
    static PrecompiledCharsmap parse(const std::string& blob, const std::string& source);
    /// Parses the base64 text of tokenizer.json's "precompiled_charsmap".
    static PrecompiledCharsmap parse_base64(std::string_view base64, const std::string& source);

    /// The replacement of the shortest prefix of `bytes` that has a rule, if any.
    std::optional<std::string_view> transform(std::string_view bytes) const;
    /// Normalises valid UTF-8 `text` (see the file comment).
    std::string normalize(std::string_view text) const;

private:
    std::vector<std::uint32_t> units_;
    std::string pool_;
};

/// Standard base64 (padding optional, whitespace not allowed). Throws InputError naming `source`.
std::string decode_base64(std::string_view text, const std::string& source);

}  // namespace novelty::encoder
