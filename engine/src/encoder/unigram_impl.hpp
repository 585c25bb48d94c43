// The insides of UnigramTokenizer (novelty/encoder/unigram.hpp), shared by unigram.cpp (the
// algorithms) and unigram_config.cpp (reading tokenizer.json). Internal to the engine.
#pragma once

#include "encoder/precompiled_charsmap.hpp"
#include "novelty/encoder/unigram.hpp"

#include <cstdint>
#include <functional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace novelty::encoder {

/// One step of the normaliser sequence.
struct NormalizerStep {
    enum class Kind { precompiled, replace_string, replace_regex, strip, nfc, nfd, nfkc, nfkd };
    Kind kind = Kind::nfc;
    PrecompiledCharsmap charsmap;  ///< precompiled
    std::string pattern;           ///< replace_string: the literal searched
    std::regex regex;              ///< replace_regex, on UTF-8 bytes (ASCII patterns only)
    std::string content;           ///< replace_*: the replacement
    bool strip_left = false, strip_right = false;
};

/// A token matched verbatim in the raw text.
struct AddedToken {
    std::u32string text;
    std::int32_t id = -1;
    bool lstrip = false, rstrip = false;
};

/// Metaspace's prepend scheme: prepend the replacement to every text piece, only to the one
/// at the start of the input, or never.
enum class Prepend { always, first, never };

/// Byte trie over the vocabulary's pieces.
class PieceTrie {
public:
    void insert(std::string_view piece, std::int32_t id);
    /// Calls visit(length, id) for each piece that is a prefix of `text`, shortest first.
    template <typename Visit>
    void prefixes(std::string_view text, Visit&& visit) const {
        std::uint32_t node = 0;
        for (std::size_t i = 0; i < text.size(); ++i) {
            const auto it = children_.find(key(node, static_cast<unsigned char>(text[i])));
            if (it == children_.end()) return;
            node = it->second;
            if (ids_[node] >= 0) visit(i + 1, ids_[node]);
        }
    }

private:
    static std::uint64_t key(std::uint32_t node, unsigned char byte) { return (std::uint64_t(node) << 8) | byte; }
    std::vector<std::int32_t> ids_ = {-1};  // per node: the piece ending there, or -1
    std::unordered_map<std::uint64_t, std::uint32_t> children_;
};

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

}  // namespace novelty::encoder

namespace novelty {

struct UnigramTokenizer::Impl {
    std::vector<std::string> pieces;
    std::vector<double> scores;
    std::unordered_map<std::string, std::int32_t, encoder::StringHash, std::equal_to<>> ids;
    encoder::PieceTrie trie;
    std::int32_t unk_id = -1;
    std::int32_t pad_id = -1;
    double min_score = 0;
    std::vector<encoder::NormalizerStep> normalizers;
    bool metaspace = false;
    std::string replacement = "\xE2\x96\x81";  // U+2581
    encoder::Prepend prepend = encoder::Prepend::always;
    bool split = true;
    std::vector<std::int32_t> prefix_ids, suffix_ids;  // the template around the pieces
    std::vector<encoder::AddedToken> added;            // longest first
    std::size_t max_length = 512;

    std::int32_t find(std::string_view piece) const {
        const auto it = ids.find(piece);
        return it == ids.end() ? -1 : it->second;
    }
    std::string normalize(std::string_view text) const;
    /// Appends the ids of a piece of text between added tokens; `at_start` when it begins the input.
    void append_text(std::string_view text, bool at_start, std::vector<std::int32_t>& out) const;
    /// Appends the Viterbi segmentation of one word.
    void append_word(std::string_view word, std::vector<std::int32_t>& out) const;
    /// The ids of the whole input before the template, at most `limit` of them.
    std::vector<std::int32_t> encode_pieces(std::string_view text, std::size_t limit) const;
};

/// Fills `impl` from the parsed tokenizer.json at `path` (defined in unigram_config.cpp).
void read_unigram_json(const std::string& path, UnigramTokenizer::Impl& impl);

}  // namespace novelty
