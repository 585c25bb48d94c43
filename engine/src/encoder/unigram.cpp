// UnigramTokenizer: normalisation, Metaspace, Viterbi segmentation, added tokens, truncation and
// the template. Reading tokenizer.json lives in unigram_config.cpp.
#include "encoder/unigram_impl.hpp"

#include "encoder/bert_text.hpp"
#include "novelty/encoder/wordpiece.hpp"
#include "novelty/util/error.hpp"

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

namespace novelty {

namespace encoder {

void PieceTrie::insert(std::string_view piece, std::int32_t id) {
    std::uint32_t node = 0;
    for (const char c : piece) {
        const auto [it, added] = children_.try_emplace(key(node, static_cast<unsigned char>(c)),
                                                       static_cast<std::uint32_t>(ids_.size()));
        if (added) ids_.push_back(-1);
        node = it->second;
    }
    if (node != 0) ids_[node] = id;  // a repeated piece keeps its last id, as the map does
}

}  // namespace encoder

namespace {

using encoder::NormalizerStep;

/// Rust's char::is_whitespace (the White_Space property).
bool is_white_space(char32_t c) {
    return (c >= 9 && c <= 13) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string unicode_normal_form(std::string_view text, int options) {
    utf8proc_uint8_t* result = nullptr;
    const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                static_cast<utf8proc_ssize_t>(text.size()), &result,
                                static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
    if (n < 0) return std::string(text);  // only valid UTF-8 reaches here
    std::string out(reinterpret_cast<char*>(result), static_cast<std::size_t>(n));
    std::free(result);
    return out;
}

std::string strip(std::string_view text, bool left, bool right) {
    std::u32string cps = encoder::decode_utf8_lossy(text);
    std::size_t begin = 0, end = cps.size();
    if (left) while (begin < end && is_white_space(cps[begin])) ++begin;
    if (right) while (end > begin && is_white_space(cps[end - 1])) --end;
    return encoder::encode_utf8(std::u32string_view(cps).substr(begin, end - begin));
}

std::string replace_all(std::string_view text, const std::string& pattern, const std::string& content) {
    std::string out;
    std::size_t pos = 0;
    for (std::size_t hit; (hit = text.find(pattern, pos)) != std::string_view::npos; pos = hit + pattern.size())
        out.append(text.substr(pos, hit - pos)).append(content);
    return out.append(text.substr(pos));
}

std::string apply(const NormalizerStep& step, std::string text) {
    switch (step.kind) {
        case NormalizerStep::Kind::precompiled: return step.charsmap.normalize(text);
        case NormalizerStep::Kind::replace_string: return replace_all(text, step.pattern, step.content);
        case NormalizerStep::Kind::replace_regex:
            return std::regex_replace(text, step.regex, step.content);  // content's '$' escaped at load
        case NormalizerStep::Kind::strip: return strip(text, step.strip_left, step.strip_right);
        case NormalizerStep::Kind::nfc: return unicode_normal_form(text, UTF8PROC_COMPOSE);
        case NormalizerStep::Kind::nfd: return unicode_normal_form(text, UTF8PROC_DECOMPOSE);
        case NormalizerStep::Kind::nfkc: return unicode_normal_form(text, UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
        case NormalizerStep::Kind::nfkd: return unicode_normal_form(text, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
    }
    return text;
}

}  // namespace

std::string UnigramTokenizer::Impl::normalize(std::string_view text) const {
    std::string out(text);
    for (const NormalizerStep& step : normalizers) out = apply(step, std::move(out));
    return out;
}

void UnigramTokenizer::Impl::append_word(std::string_view word, std::vector<std::int32_t>& out) const {
    struct Node {
        double score = 0;
        std::size_t start = 0;
        std::int32_t id = -1;  // -1: not reached yet
    };
    const std::size_t size = word.size();
    std::vector<Node> best(size + 1);
    const double unk_score = min_score - 10.0;
    for (std::size_t start = 0; start < size;) {
        const auto lead = static_cast<unsigned char>(word[start]);
        const std::size_t char_len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        const double here = best[start].score;
        bool has_single = false;
        const auto offer = [&](std::size_t end, std::int32_t id, double score) {
            Node& target = best[end];
            if (target.id < 0 || here + score > target.score) target = {here + score, start, id};
        };
        trie.prefixes(word.substr(start), [&](std::size_t length, std::int32_t id) {
            offer(start + length, id, scores[static_cast<std::size_t>(id)]);
            if (length == char_len) has_single = true;
        });
        if (!has_single) offer(std::min(size, start + char_len), unk_id, unk_score);
        start += char_len;
    }
    // Backtrack; consecutive unknown pieces become one unknown token.
    std::vector<std::int32_t> reversed;
    for (std::size_t end = size; end > 0; end = best[end].start) {
        const std::int32_t id = best[end].id;
        if (id == unk_id && !reversed.empty() && reversed.back() == unk_id) continue;
        reversed.push_back(id);
    }
    out.insert(out.end(), reversed.rbegin(), reversed.rend());
}

void UnigramTokenizer::Impl::append_text(std::string_view text, bool at_start, std::vector<std::int32_t>& out) const {
    std::string normalized = normalize(text);
    if (normalized.empty()) return;
    if (!metaspace) return append_word(normalized, out);
    normalized = replace_all(normalized, " ", replacement);
    const bool prepend_here = prepend == encoder::Prepend::always || (prepend == encoder::Prepend::first && at_start);
    if (prepend_here && normalized.rfind(replacement, 0) != 0) normalized.insert(0, replacement);
    if (!split) return append_word(normalized, out);
    // Each replacement character starts a new word (it stays at the front of that word).
    std::size_t begin = 0;
    for (std::size_t hit = normalized.find(replacement, 1); hit != std::string::npos;
         hit = normalized.find(replacement, hit + replacement.size())) {
        if (hit > begin) append_word(std::string_view(normalized).substr(begin, hit - begin), out);
        begin = hit;
    }
    append_word(std::string_view(normalized).substr(begin), out);
}

std::vector<std::int32_t> UnigramTokenizer::Impl::encode_pieces(std::string_view text, std::size_t limit) const {
    const std::u32string input = encoder::decode_utf8_lossy(text);
    const std::u32string_view view(input);
    std::vector<std::int32_t> out;
    std::size_t segment_start = 0, i = 0;
    const auto flush = [&](std::size_t end) {
        if (end > segment_start && out.size() < limit)
            append_text(encoder::encode_utf8(view.substr(segment_start, end - segment_start)), segment_start == 0, out);
    };
    while (i < view.size() && out.size() < limit) {
        const encoder::AddedToken* match = nullptr;
        for (const auto& token : added)  // longest first: leftmost-longest match
            if (view.substr(i, token.text.size()) == token.text) {
                match = &token;
                break;
            }
        if (match == nullptr) {
            ++i;
            continue;
        }
        std::size_t end = i;
        if (match->lstrip) while (end > segment_start && is_white_space(view[end - 1])) --end;
        flush(end);
        if (out.size() < limit) out.push_back(match->id);
        i += match->text.size();
        if (match->rstrip) while (i < view.size() && is_white_space(view[i])) ++i;
        segment_start = i;
    }
    flush(view.size());
    if (out.size() > limit) out.resize(limit);
    return out;
}

UnigramTokenizer::UnigramTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
UnigramTokenizer::UnigramTokenizer(UnigramTokenizer&&) noexcept = default;
UnigramTokenizer& UnigramTokenizer::operator=(UnigramTokenizer&&) noexcept = default;
UnigramTokenizer::~UnigramTokenizer() = default;

UnigramTokenizer UnigramTokenizer::load(const std::string& tokenizer_json, std::size_t max_length) {
    if (max_length < 2) throw UsageError("unigram: max_length must be at least 2, not " + std::to_string(max_length), "max_length");
    auto impl = std::make_unique<Impl>();
    impl->max_length = max_length;
    read_unigram_json(tokenizer_json, *impl);
    return UnigramTokenizer(std::move(impl));
}

UnigramTokenizer UnigramTokenizer::load_model_dir(const std::string& model_dir) {
    return load(model_dir + "/tokenizer.json", read_wordpiece_config(model_dir).max_length);
}

bool UnigramTokenizer::is_unigram(const std::string& tokenizer_json) {
    std::ifstream in(tokenizer_json, std::ios::binary);
    if (!in) return false;
    // The model's type is near the end of a large file: look for the key without parsing it all.
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    return text.find("\"type\":\"Unigram\"") != std::string::npos || text.find("\"type\": \"Unigram\"") != std::string::npos;
}

std::vector<std::int32_t> UnigramTokenizer::encode(std::string_view text) const {
    const std::size_t room = impl_->max_length - impl_->prefix_ids.size() - impl_->suffix_ids.size();
    std::vector<std::int32_t> out = impl_->prefix_ids;
    const std::vector<std::int32_t> pieces = impl_->encode_pieces(text, room);
    out.insert(out.end(), pieces.begin(), pieces.end());
    out.insert(out.end(), impl_->suffix_ids.begin(), impl_->suffix_ids.end());
    return out;
}

std::vector<std::string> UnigramTokenizer::tokenize(std::string_view text) const {
    std::vector<std::string> out;
    for (const std::int32_t id : impl_->encode_pieces(text, std::numeric_limits<std::size_t>::max()))
        out.push_back(impl_->pieces[static_cast<std::size_t>(id)]);
    return out;
}

std::string UnigramTokenizer::normalize(std::string_view text) const {
    return impl_->normalize(encoder::encode_utf8(encoder::decode_utf8_lossy(text)));
}

std::int32_t UnigramTokenizer::token_id(std::string_view token) const { return impl_->find(token); }

const std::string& UnigramTokenizer::token(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= impl_->pieces.size())
        throw UsageError("unigram: token id " + std::to_string(id) + " is out of range (vocabulary of " +
                         std::to_string(impl_->pieces.size()) + ")");
    return impl_->pieces[static_cast<std::size_t>(id)];
}

std::size_t UnigramTokenizer::vocab_size() const { return impl_->pieces.size(); }
std::size_t UnigramTokenizer::max_length() const { return impl_->max_length; }
std::int32_t UnigramTokenizer::pad_id() const { return impl_->pad_id; }

}  // namespace novelty
