// BERT WordPiece tokenization that reproduces the token ids of the Hugging Face fast BERT
// tokenizer (BertTokenizerFast: BertNormalizer + BertPreTokenizer + WordPiece + [CLS]/[SEP]
// template), the one sentence-transformers uses for all-MiniLM-L6-v2 and bge-style models.
//
// Pipeline for encode(text):
//   1. UTF-8 decoding. Invalid bytes never throw: each maximal invalid subsequence becomes
//      U+FFFD (as Python's bytes.decode("utf-8", "replace")), which step 3 then drops.
//   2. Special tokens (`special_tokens`, e.g. "[CLS]", "[MASK]") written in the text are matched
//      verbatim, case-sensitively, before any normalisation, and give their own id.
//   3. Normalisation of the text between them: drop U+0000, U+FFFD and control/format/private-use
//      characters (except \t \n \r); turn White_Space characters into ' '; put spaces around CJK
//      ideographs; strip accents (NFD, then drop nonspacing marks); lower-case, one character
//      at a time (so a capital sigma is always U+03C3, and U+0130 becomes "i" + U+0307).
//   4. Split on whitespace; every punctuation character (ASCII 33-47, 58-64, 91-96, 123-126 or a
//      Unicode P* category) is a word of its own.
//   5. WordPiece: greedy longest-match-first with "##" continuation pieces; a word longer than
//      max_chars_per_word code points, or one that cannot be covered, is one [UNK].
//   6. Truncation of the pieces to max_length - 2, then [CLS] ... [SEP].
//
// Where the fast tokenizer and the pure-Python BertTokenizer disagree, this follows the fast one:
// its character classes and lower-case mappings (measured into engine/src/encoder/bert_tables.inc
// for every code point, since its Unicode tables are older than utf8proc's for categories and
// newer for case), its CJK range U+2B920-U+2CEAF (Python: U+2B820), and accents stripped before
// lower-casing without Python's final-sigma rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace novelty {

/// How to tokenize. The defaults are those of all-MiniLM-L6-v2 (bert-base-uncased vocabulary).
struct WordPieceConfig {
    /// Lower-case every character (BertNormalizer "lowercase", tokenizer_config "do_lower_case").
    bool lower_case = true;
    /// NFD + drop nonspacing marks. HF's null means "same as lower_case"; read_wordpiece_config
    /// resolves that.
    bool strip_accents = true;
    /// Put spaces around CJK ideographs so each is a word.
    bool tokenize_chinese_chars = true;
    /// Drop control characters and map whitespace to ' ' (BertNormalizer "clean_text").
    bool clean_text = true;
    /// sentence-transformers' own "do_lower_case" (sentence_bert_config.json): Python's
    /// str.lower() applied to the raw text before tokenization (so it also lower-cases special
    /// tokens written in the text, and maps a word-final capital sigma to U+03C2).
    bool lower_case_input = false;
    /// Largest number of ids encode() returns, [CLS] and [SEP] included (at least 2).
    std::size_t max_length = 256;
    /// Longer words (in code points) become [UNK].
    std::size_t max_chars_per_word = 100;
    /// Prefix of pieces that continue a word.
    std::string continuing_prefix = "##";
    std::string unk = "[UNK]";
    std::string cls = "[CLS]";
    std::string sep = "[SEP]";
    std::string pad = "[PAD]";
    /// Tokens matched verbatim in the input text (HF "added tokens" with normalized=false).
    std::vector<std::string> special_tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
};

/// Reads the tokenizer settings of a Hugging Face / sentence-transformers model directory:
/// tokenizer.json (normalizer, WordPiece model, added tokens) when present, then
/// tokenizer_config.json (do_lower_case, strip_accents, tokenize_chinese_chars, special tokens,
/// model_max_length), whose keys take precedence as in transformers, then
/// sentence_bert_config.json (max_seq_length, do_lower_case), which sets max_length. Without
/// max_seq_length, max_length is model_max_length when that is sensible (<= 1,000,000), else
/// 512. Missing files and keys keep the defaults. Throws InputError naming the file for a file
/// that is not valid JSON or a value of the wrong type.
WordPieceConfig read_wordpiece_config(const std::string& model_dir);

/// A loaded vocabulary plus its configuration. Immutable after load(); encode() is thread-safe.
class WordPieceTokenizer {
public:
    /// Reads `vocab_path` (one token per line, id = 0-based line number; a repeated token keeps
    /// its last id, as HF does). Throws InputError when the file cannot be read or lacks the unk,
    /// cls or sep token, UsageError when config.max_length < 2.
    static WordPieceTokenizer load(const std::string& vocab_path, const WordPieceConfig& config);
    /// load(model_dir + "/vocab.txt", read_wordpiece_config(model_dir)).
    static WordPieceTokenizer load_model_dir(const std::string& model_dir);

    WordPieceTokenizer(WordPieceTokenizer&&) noexcept;
    WordPieceTokenizer& operator=(WordPieceTokenizer&&) noexcept;
    ~WordPieceTokenizer();

    /// [CLS] pieces... [SEP], the pieces truncated so that the whole has at most max_length ids.
    std::vector<std::int32_t> encode(std::string_view text) const;
    /// The pieces of `text` as strings, without [CLS]/[SEP] and without truncation (debugging).
    std::vector<std::string> tokenize(std::string_view text) const;

    /// Id of `token`, or -1 when it is not in the vocabulary.
    std::int32_t token_id(std::string_view token) const;
    /// Token of `id`; throws UsageError when id is out of range.
    const std::string& token(std::int32_t id) const;
    std::size_t vocab_size() const;
    const WordPieceConfig& config() const;

private:
    struct Impl;
    explicit WordPieceTokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty
