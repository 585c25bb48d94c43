// Turning text into vectors. Two implementations sit behind this interface: the built-in
// BERT-family encoder (engine/, offline) and an OpenAI-compatible /v1/embeddings client (host/).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace novelty {

class Embedder {
public:
    virtual ~Embedder() = default;
    /// Identifies the model in manifests and provenance, e.g. "all-MiniLM-L6-v2" or
    /// "http://host:8080/v1#bge-m3".
    virtual std::string name() const = 0;
    /// Output dimension; 0 when not known before the first call (remote models).
    virtual std::size_t dim() const = 0;
    /// "mean", "cls", or "" when unknown (remote models).
    virtual std::string pooling() const = 0;
    /// Where the vectors are computed: "cpu", "cuda", or "" when not known (remote models).
    virtual std::string device() const { return ""; }
    /// The arithmetic of the built-in CPU encoder's products: "f32", "bf16" or "int8"; "" when not
    /// recorded (remote models, the CUDA encoder, whose weights --device-storage names).
    virtual std::string precision() const { return ""; }
    /// Embeds each text: returns texts.size() x dim() float32 values, row-major, each row
    /// L2-normalised (an empty text still yields a vector). Throws Error on failure.
    virtual std::vector<float> embed(const std::vector<std::string>& texts) = 0;
};

/// The text of a paper or idea as it is embedded: the title, a blank line, then the text, with
/// surrounding whitespace trimmed; just one of them when the other is empty.
std::string embedding_text(const std::string& title, const std::string& text);

}  // namespace novelty
