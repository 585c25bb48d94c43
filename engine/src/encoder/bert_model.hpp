// A BERT encoder's forward pass on the CPU, for sentence embeddings: float32 throughout (OpenBLAS
// sgemm), or with the linear layers' products in bf16 (bf16_gemm.hpp).
#pragma once

#include "util/bf16_gemm.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace novelty::encoder {

struct BertConfig {
    std::size_t vocab_size = 0;
    std::size_t hidden = 0;
    std::size_t layers = 0;
    std::size_t heads = 0;
    std::size_t intermediate = 0;
    std::size_t max_positions = 0;
    std::size_t type_vocab = 0;
    float layer_norm_eps = 1e-12f;
    /// RoBERTa / XLM-RoBERTa (model_type "roberta", "xlm-roberta", "camembert"): positions count
    /// from padding_idx + 1, and a token equal to padding_idx sits at position padding_idx and does
    /// not advance the count (transformers' create_position_ids_from_input_ids). BERT: 0, 1, 2, ...
    bool roberta_positions = false;
    std::int32_t padding_idx = 1;
    /// Longest token sequence the position table allows.
    std::size_t max_tokens() const {
        return roberta_positions ? max_positions - static_cast<std::size_t>(padding_idx) - 1 : max_positions;
    }
};

/// Position ids of one token sequence under `config` (see BertConfig::roberta_positions).
std::vector<std::size_t> position_ids(const BertConfig& config, const std::vector<std::int32_t>& ids);

/// Reads config.json of a Hugging Face BERT or (XLM-)RoBERTa model directory; throws InputError
/// naming the file for a missing key or an unsupported model (hidden_act other than gelu,
/// non-absolute positions, another model_type).
BertConfig read_bert_config(const std::string& model_dir);

struct BertLayer {
    std::vector<float> q_w, q_b, k_w, k_b, v_w, v_b;  // [hidden x hidden], [hidden]
    std::vector<float> attn_out_w, attn_out_b, attn_ln_g, attn_ln_b;
    std::vector<float> inter_w, inter_b;              // [intermediate x hidden], [intermediate]
    std::vector<float> out_w, out_b, out_ln_g, out_ln_b;  // [hidden x intermediate], [hidden]
};

/// How the linear layers (query, key, value, attention output, both feed-forward layers) multiply.
/// LayerNorm, softmax, GELU, the attention products, the residual stream and pooling stay float32.
enum class LinearPrecision {
    f32,           ///< float32 weights and products (the reference)
    bf16_avx512,   ///< bf16 weights and activations, float32 sums, by vdpbf16ps (AVX512-BF16 CPUs)
    bf16_float32,  ///< the same bf16-rounded operands through float32 sgemm (any CPU; not faster)
};

/// A linear layer's weight in bf16: packed panels for the AVX512-BF16 kernel, or the rounded
/// values as float32 [out x in] for sgemm; only the one the precision uses is held.
struct Bf16Linear {
    Bf16Panels panels;
    std::vector<float> rounded;
};

class BertModel {
public:
    /// Loads model.safetensors of `model_dir` (tensor names with or without a "bert." or
    /// "roberta." prefix).
    static BertModel load(const std::string& model_dir);

    const BertConfig& config() const { return config_; }

    /// Converts the linear layers' weights for `precision`, once, before the first forward();
    /// bf16 releases their float32 copies (layers() then holds only the biases and LayerNorms).
    /// Throws UsageError when called twice with different precisions, Error for bf16_avx512 on a
    /// CPU without AVX512-BF16.
    void set_linear_precision(LinearPrecision precision);
    LinearPrecision linear_precision() const { return precision_; }

    /// Runs the encoder on `n_seqs` token sequences and writes their last hidden states, one
    /// row of `hidden` floats per token, sequences concatenated in order (sum of lengths rows).
    /// Sequences are attended separately (no padding). Each length must be 1..max_tokens().
    void forward(const std::vector<const std::vector<std::int32_t>*>& seqs, std::vector<float>& hidden_out) const;

    /// The weights, for the CUDA encoder to upload.
    const std::vector<float>& word_embeddings() const { return word_emb_; }
    const std::vector<float>& position_embeddings() const { return pos_emb_; }
    const std::vector<float>& type_embeddings() const { return type_emb_; }
    const std::vector<float>& embedding_ln_gamma() const { return emb_ln_g_; }
    const std::vector<float>& embedding_ln_beta() const { return emb_ln_b_; }
    const std::vector<BertLayer>& layers() const { return layers_; }

private:
    BertConfig config_;
    std::vector<float> word_emb_, pos_emb_, type_emb_, emb_ln_g_, emb_ln_b_;
    std::vector<BertLayer> layers_;
    LinearPrecision precision_ = LinearPrecision::f32;
    struct Bf16Layer {
        Bf16Linear q, k, v, attn_out, inter, out;
    };
    std::vector<Bf16Layer> bf16_layers_;
};

}  // namespace novelty::encoder
