#include "encoder/model_tokenizer.hpp"

#include "novelty/util/error.hpp"

#include <filesystem>

namespace novelty::encoder {

namespace fs = std::filesystem;

ModelTokenizer ModelTokenizer::load(const std::string& model_dir) {
    ModelTokenizer t;
    const std::string tokenizer_json = (fs::path(model_dir) / "tokenizer.json").string();
    const std::string vocab = (fs::path(model_dir) / "vocab.txt").string();
    std::error_code ec;
    if (UnigramTokenizer::is_unigram(tokenizer_json)) {
        t.unigram_.emplace(UnigramTokenizer::load_model_dir(model_dir));
    } else if (fs::exists(vocab, ec)) {
        t.wordpiece_.emplace(WordPieceTokenizer::load(vocab, read_wordpiece_config(model_dir)));
    } else {
        throw InputError(model_dir, 0,
                         "no tokenizer: expected tokenizer.json with a Unigram model (XLM-RoBERTa; a "
                         "sentencepiece.bpe.model alone is not read) or vocab.txt (BERT WordPiece)");
    }
    return t;
}

std::vector<std::int32_t> ModelTokenizer::encode(std::string_view text) const {
    return unigram_ ? unigram_->encode(text) : wordpiece_->encode(text);
}

std::size_t ModelTokenizer::max_length() const {
    return unigram_ ? unigram_->max_length() : wordpiece_->config().max_length;
}

}  // namespace novelty::encoder
