// Choosing the embedder from --embedder (default | PATH | URL) and the corpus's manifest.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/encoder/embedder.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace novelty::cli {

struct EmbedderFlags {
    std::string spec;         ///< "default", a model directory, or an http(s) base URL; "" = from the corpus
    std::string model;        ///< remote model name (--embed-model; else $NOVELTY_EMBED_MODEL)
    std::string api_key;      ///< remote key (--embed-key; else $NOVELTY_EMBED_API_KEY or $OPENAI_API_KEY)
    std::size_t threads = 0;
    std::string device = "auto";  ///< built-in encoder: auto | cpu | cuda (--device)
    std::string precision = "auto";  ///< CPU encoder's products: auto | f32 | bf16 | int8 (--precision)
    /// The command's --device option when another part of it (the search backend) registered it
    /// first: its value then also chooses the encoder's device. Null otherwise.
    const CLI::Option* shared_device = nullptr;
};

/// The encoder device the flags ask for: the shared --device when it was given, else `device`.
std::string encoder_device(const EmbedderFlags& flags);

/// The embedder a spec names: "default" is the built-in all-MiniLM-L6-v2, an http(s) URL an
/// OpenAI-compatible server, anything else a model directory.
std::unique_ptr<Embedder> make_embedder(const EmbedderFlags& flags);

/// The embedder for queries against `corpus`: the one the flags name, which must match the
/// corpus's recorded embedder, or, without a spec, the corpus's own (the built-in one by name,
/// or the recorded server URL). Throws UsageError when they differ or none can be found.
std::unique_ptr<Embedder> embedder_for_corpus(const Corpus& corpus, const EmbedderFlags& flags);

/// Adds --embedder, --embed-model, --embed-key and --precision to a command, and --device unless
/// the command already has one (whose value then chooses the encoder's device too).
void add_embedder_flags(CLI::App& command, EmbedderFlags& flags);

}  // namespace novelty::cli
