// The tokenizer of a model directory, whichever kind it is: a Unigram tokenizer.json
// (XLM-RoBERTa, e.g. BGE-M3) or a WordPiece vocab.txt (BERT). Internal to the engine.
#pragma once

#include "novelty/encoder/unigram.hpp"
#include "novelty/encoder/wordpiece.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace novelty::encoder {

class ModelTokenizer {
public:
    /// tokenizer.json with a Unigram model when present, else vocab.txt (WordPiece). Throws
    /// InputError naming the directory when it has neither.
    static ModelTokenizer load(const std::string& model_dir);

    /// Template ids (e.g. [CLS] ... [SEP] or <s> ... </s>), at most max_length() of them, at least 2.
    std::vector<std::int32_t> encode(std::string_view text) const;
    std::size_t max_length() const;
    /// "unigram" or "wordpiece".
    std::string kind() const { return unigram_ ? "unigram" : "wordpiece"; }

private:
    std::optional<UnigramTokenizer> unigram_;
    std::optional<WordPieceTokenizer> wordpiece_;
};

}  // namespace novelty::encoder
