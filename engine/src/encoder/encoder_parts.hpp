// Parts shared by the CPU and the CUDA text encoders: the model directory's name and pooling,
// batching by token budget, CPU pooling. Internal to the engine.
#pragma once

#include "encoder/bert_model.hpp"
#include "encoder/model_tokenizer.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace novelty::encoder {

enum class Pooling { mean, cls };

/// 1_Pooling/config.json of a sentence-transformers directory; mean when absent. Throws
/// InputError naming the file for another mode.
Pooling read_pooling(const std::string& model_dir);
std::string pooling_name(Pooling pooling);

/// The name recorded for a model directory: its last component as given (a symlink's own name).
std::string model_name(const std::string& model_dir);

/// Throws InputError naming `model_dir` when the tokenizer may emit more tokens than the
/// model has positions for.
void check_lengths(const std::string& model_dir, const ModelTokenizer& tokenizer, const BertConfig& config);

/// Texts ordered by token count (stable) and cut into [begin, end) ranges of `order` of about
/// `budget` tokens each (a longer text is a group of its own).
struct TokenGroups {
    std::vector<std::size_t> order;
    std::vector<std::pair<std::size_t, std::size_t>> groups;
};
TokenGroups group_by_tokens(const std::vector<std::vector<std::int32_t>>& tokens, std::size_t budget);

/// Writes the pooled, L2-normalised vector of one sequence's `len` x `h` hidden states to `dst`
/// (a zero vector stays zero).
void pool_and_normalize(const float* hidden, std::size_t len, std::size_t h, Pooling pooling, float* dst);

}  // namespace novelty::encoder
