// Embedding every paper of a corpus with an Embedder, resumably.
#pragma once

#include "novelty/encoder/embedder.hpp"
#include "novelty/io/npy.hpp"

#include <cstddef>
#include <functional>
#include <string>

namespace novelty {

struct EmbedCorpusOptions {
    std::size_t batch = 256;         ///< papers per call to the embedder (and per saved step)
    bool resume = false;             ///< continue an interrupted run with the same embedder
    DType dtype = DType::f32;        ///< storage type of vectors.npy
    std::function<void(std::size_t done, std::size_t total)> on_progress;
};

/// Embeds each paper's embedding_text(title, abstract) in row order and attaches the vectors
/// (as add_vectors does: normalised, manifest updated with the embedder, caches removed).
/// Finished batches are saved in DIR/embed.partial.* as they complete; with resume, a run
/// continues after the last saved batch (the embedder and papers must be the same), otherwise an
/// existing partial run is an error that says to pass --resume or remove it. Returns the number
/// of papers embedded by this call.
std::size_t embed_corpus(const std::string& dir, Embedder& embedder, const EmbedCorpusOptions& options);

}  // namespace novelty
