// WordPieceTokenizer: vocabulary, special-token splitting, WordPiece, truncation and the
// [CLS]/[SEP] template. Text normalisation lives in bert_text.cpp, config reading in
// wordpiece_config.cpp.
#include "novelty/encoder/wordpiece.hpp"

#include "encoder/bert_text.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace novelty {

namespace {

/// Hash that lets the vocabulary be searched with a std::string_view.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

/// A special token written in the text, as code points, with its id.
struct SpecialToken {
    std::u32string text;
    std::int32_t id;
};

}  // namespace

struct WordPieceTokenizer::Impl {
    WordPieceConfig config;
    encoder::BertNormalizerOptions normalizer;
    std::vector<std::string> tokens;
    std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> ids;
    std::vector<SpecialToken> specials;  // longest first
    std::int32_t unk_id = -1;
    std::int32_t cls_id = -1;
    std::int32_t sep_id = -1;

    std::int32_t find(std::string_view token) const {
        const auto it = ids.find(token);
        return it == ids.end() ? -1 : it->second;
    }

    /// Appends the pieces of `text` (no special tokens in it) to `out` until it holds `limit`.
    void append_text(std::u32string_view text, std::size_t limit, std::vector<std::int32_t>& out) const;
    /// Appends the WordPiece ids of one word (all of them, or one [UNK]).
    void append_word(std::u32string_view word, std::vector<std::int32_t>& out) const;
    /// Pieces of the whole input, at most `limit` of them.
    std::vector<std::int32_t> pieces(std::string_view text, std::size_t limit) const;
};

void WordPieceTokenizer::Impl::append_word(std::u32string_view word, std::vector<std::int32_t>& out) const {
    if (word.size() > config.max_chars_per_word) {
        out.push_back(unk_id);
        return;
    }
    // UTF-8 of the word with the byte offset of every code point (and of its end).
    std::string utf8;
    std::vector<std::size_t> offsets;
    offsets.reserve(word.size() + 1);
    for (const char32_t cp : word) {
        offsets.push_back(utf8.size());
        encoder::append_utf8(utf8, cp);
    }
    offsets.push_back(utf8.size());

    const std::size_t first = out.size();
    std::string key;
    std::size_t start = 0;
    while (start < word.size()) {
        std::int32_t found = -1;
        std::size_t end = word.size();
        for (; end > start; --end) {
            key.clear();
            if (start > 0) key += config.continuing_prefix;
            key.append(utf8, offsets[start], offsets[end] - offsets[start]);
            found = find(key);
            if (found >= 0) break;
        }
        if (found < 0) {
            out.resize(first);
            out.push_back(unk_id);
            return;
        }
        out.push_back(found);
        start = end;
    }
}

void WordPieceTokenizer::Impl::append_text(std::u32string_view text, std::size_t limit,
                                           std::vector<std::int32_t>& out) const {
    const std::u32string normalized = encoder::bert_normalize(text, normalizer);
    for (const std::u32string& word : encoder::bert_pre_tokenize(normalized)) {
        if (out.size() >= limit) return;
        append_word(word, out);
    }
}

std::vector<std::int32_t> WordPieceTokenizer::Impl::pieces(std::string_view text, std::size_t limit) const {
    std::u32string input = encoder::decode_utf8_lossy(text);
    if (config.lower_case_input) input = encoder::python_lower(input);
    const std::u32string_view view(input);

    std::vector<std::int32_t> out;
    std::size_t segment_start = 0;
    std::size_t i = 0;
    while (i < view.size() && out.size() < limit) {
        const SpecialToken* match = nullptr;
        for (const SpecialToken& special : specials) {  // longest first: leftmost-longest match
            if (view.substr(i, special.text.size()) == special.text) {
                match = &special;
                break;
            }
        }
        if (match == nullptr) {
            ++i;
            continue;
        }
        append_text(view.substr(segment_start, i - segment_start), limit, out);
        if (out.size() < limit) out.push_back(match->id);
        i += match->text.size();
        segment_start = i;
    }
    if (out.size() < limit) append_text(view.substr(segment_start), limit, out);
    if (out.size() > limit) out.resize(limit);
    return out;
}

WordPieceTokenizer::WordPieceTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WordPieceTokenizer::WordPieceTokenizer(WordPieceTokenizer&&) noexcept = default;
WordPieceTokenizer& WordPieceTokenizer::operator=(WordPieceTokenizer&&) noexcept = default;
WordPieceTokenizer::~WordPieceTokenizer() = default;

WordPieceTokenizer WordPieceTokenizer::load(const std::string& vocab_path, const WordPieceConfig& config) {
    if (config.max_length < 2) {
        throw UsageError("wordpiece: max_length must be at least 2 (room for [CLS] and [SEP]), not " +
                         std::to_string(config.max_length));
    }
    std::ifstream in(vocab_path, std::ios::binary);
    if (!in) throw InputError(vocab_path, 0, "cannot open the vocabulary file");
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) throw InputError(vocab_path, 0, "cannot read the vocabulary file");

    auto impl = std::make_unique<Impl>();
    impl->config = config;
    impl->normalizer = {config.clean_text, config.tokenize_chinese_chars, config.strip_accents, config.lower_case};
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        std::size_t end = bytes.find('\n', pos);
        if (end == std::string::npos) end = bytes.size();
        std::string token = bytes.substr(pos, end - pos);
        if (!token.empty() && token.back() == '\r') token.pop_back();
        if (impl->tokens.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
            throw InputError(vocab_path, impl->tokens.size() + 1, "too many tokens");
        }
        const auto id = static_cast<std::int32_t>(impl->tokens.size());
        impl->ids[token] = id;  // a repeated token keeps its last id, as in HF's load_vocab
        impl->tokens.push_back(std::move(token));
        pos = end + 1;
    }

    const auto require = [&](const std::string& token, const char* role) {
        const std::int32_t id = impl->find(token);
        if (id < 0) {
            throw InputError(vocab_path, 0, std::string("the ") + role + " token '" + token +
                                                "' is not in the vocabulary");
        }
        return id;
    };
    impl->unk_id = require(config.unk, "unknown");
    impl->cls_id = require(config.cls, "cls");
    impl->sep_id = require(config.sep, "sep");
    for (const std::string& token : config.special_tokens) {
        const std::int32_t id = impl->find(token);
        if (id < 0 || token.empty()) continue;  // HF would append it to the vocabulary; not needed
        impl->specials.push_back({encoder::decode_utf8_lossy(token), id});
    }
    std::stable_sort(impl->specials.begin(), impl->specials.end(),
                     [](const SpecialToken& a, const SpecialToken& b) { return a.text.size() > b.text.size(); });
    return WordPieceTokenizer(std::move(impl));
}

WordPieceTokenizer WordPieceTokenizer::load_model_dir(const std::string& model_dir) {
    return load(model_dir + "/vocab.txt", read_wordpiece_config(model_dir));
}

std::vector<std::int32_t> WordPieceTokenizer::encode(std::string_view text) const {
    std::vector<std::int32_t> out = impl_->pieces(text, impl_->config.max_length - 2);
    out.insert(out.begin(), impl_->cls_id);
    out.push_back(impl_->sep_id);
    return out;
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
    std::vector<std::string> out;
    for (const std::int32_t id : impl_->pieces(text, std::numeric_limits<std::size_t>::max())) {
        out.push_back(impl_->tokens[static_cast<std::size_t>(id)]);
    }
    return out;
}

std::int32_t WordPieceTokenizer::token_id(std::string_view token) const { return impl_->find(token); }

const std::string& WordPieceTokenizer::token(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= impl_->tokens.size()) {
        throw UsageError("wordpiece: token id " + std::to_string(id) + " is out of range (vocabulary of " +
                         std::to_string(impl_->tokens.size()) + ")");
    }
    return impl_->tokens[static_cast<std::size_t>(id)];
}

std::size_t WordPieceTokenizer::vocab_size() const { return impl_->tokens.size(); }

const WordPieceConfig& WordPieceTokenizer::config() const { return impl_->config; }

}  // namespace novelty
