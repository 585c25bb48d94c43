// SentencePiece unigram tokenization as the Hugging Face fast tokenizer does it from a
// tokenizer.json (the tokenizer of XLM-RoBERTa models such as BGE-M3), reproducing its token ids.
//
// Supported tokenizer.json parts (anything else is refused with an InputError naming the file
// and the part):
//   model          "Unigram" with "vocab" [[piece, score], ...] and "unk_id"; byte_fallback false.
//   normalizer     null, or one of / a "Sequence" of: "Precompiled" (SentencePiece charsmap, e.g.
//                  nmt_nfkc), "Replace" (a literal "String" pattern, or an ASCII "Regex" pattern),
//                  "Strip", "NFC", "NFD", "NFKC", "NFKD".
//   pre_tokenizer  "Metaspace" (replacement, prepend_scheme always|first|never or the older
//                  add_prefix_space, split), or a "Sequence" holding only that.
//   post_processor "RobertaProcessing", "TemplateProcessing" (single: special tokens around $A),
//                  or null (then the template is <s> $A </s> when those tokens exist).
//   added_tokens   matched verbatim in the raw text, leftmost-longest, honouring lstrip/rstrip;
//                  only tokens with normalized false (all special tokens of XLM-RoBERTa).
//
// Pipeline for encode(text): lossy UTF-8 decoding (invalid bytes become U+FFFD); split out added
// tokens; normalise each piece of text between them; Metaspace (spaces become U+2581, which is
// prepended and starts every word); Viterbi segmentation of each word into the pieces of highest
// total score (ties: the path found first, shorter pieces first), a character no piece covers
// scoring min_score - 10 as the unknown token, consecutive unknown characters fused into one
// unknown token; truncation to max_length - 2 pieces; then the template, e.g. <s> ... </s>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace novelty {

/// A loaded unigram tokenizer. Immutable after load(); encode() is thread-safe.
class UnigramTokenizer {
public:
    /// Reads `tokenizer_json`; `max_length` (at least 2) bounds encode()'s output. Throws
    /// InputError naming the file for an unreadable, malformed or unsupported tokenizer,
    /// UsageError for max_length < 2.
    static UnigramTokenizer load(const std::string& tokenizer_json, std::size_t max_length);
    /// load(model_dir + "/tokenizer.json", L), where L is resolved as for WordPiece models:
    /// sentence_bert_config.json's max_seq_length, else tokenizer_config.json's
    /// model_max_length when sensible, else 512.
    static UnigramTokenizer load_model_dir(const std::string& model_dir);
    /// True when `tokenizer_json` exists and its model is of type "Unigram".
    static bool is_unigram(const std::string& tokenizer_json);

    UnigramTokenizer(UnigramTokenizer&&) noexcept;
    UnigramTokenizer& operator=(UnigramTokenizer&&) noexcept;
    ~UnigramTokenizer();

    /// The template around the pieces (e.g. <s> pieces </s>), pieces truncated so that the
    /// whole has at most max_length ids.
    std::vector<std::int32_t> encode(std::string_view text) const;
    /// The pieces of `text` as strings, without the template and without truncation.
    std::vector<std::string> tokenize(std::string_view text) const;
    /// The normaliser's output for `text` (no added-token splitting; debugging and tests).
    std::string normalize(std::string_view text) const;

    /// Id of `token`, or -1 when it is not in the vocabulary.
    std::int32_t token_id(std::string_view token) const;
    /// Token of `id`; throws UsageError when id is out of range.
    const std::string& token(std::int32_t id) const;
    std::size_t vocab_size() const;
    std::size_t max_length() const;
    /// Id of the padding token ("<pad>"), or -1 when the vocabulary has none.
    std::int32_t pad_id() const;

    struct Impl;

private:
    explicit UnigramTokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty
