// A BERT encoder's forward pass on the CPU, for sentence embeddings: float32 throughout (OpenBLAS
// sgemm), or with the linear layers' products in bf16 (bf16_gemm.hpp) or int8 (int8_gemm.hpp).
#pragma once

#include "util/bf16_gemm.hpp"
#include "util/int8_gemm.hpp"

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
    int8_kernel,   ///< int8 (int8_gemm.hpp) for the layers int8_linear_layers names, by the int8
                   ///< kernel of the CPU path (AMX, AVX512-VNNI, AVX-VNNI or AVX2; cpu_path.hpp);
                   ///< bf16 for the others, by the CPU path's bf16 products
    int8_float32,  ///< the same integer sums through float32 sgemm (any CPU; not faster)
};

/// The six linear layers of a block, in the order of BertLayer; a bit mask of them selects which
/// run in int8 under the int8 precisions.
enum LinearLayer : unsigned {
    linear_query = 1u << 0,
    linear_key = 1u << 1,
    linear_value = 1u << 2,
    linear_attention_out = 1u << 3,
    linear_intermediate = 1u << 4,
    linear_output = 1u << 5,
};

/// The layers the int8 precisions run in int8: query, key, attention output and the first
/// feed-forward layer (7 of each block's 12 hidden^2 multiply-adds). Chosen by the accuracy bar
/// (docs/encoder.md): all-MiniLM-L6-v2 on 1,000 real abstracts, with the LayerNorm-fed layers
/// smoothed, keeps cosine >= 0.999 to float32 with these (min 0.99934, mean 0.99965); adding the
/// value layer (min 0.99865) or the second feed-forward layer (0.99897) breaks it.
inline constexpr unsigned int8_linear_layers = linear_query | linear_key | linear_attention_out | linear_intermediate;

/// One linear layer's weight in a narrow type, in the form its path multiplies (only that one is
/// held): bf16 panels for AVX512-BF16, bf16-rounded float32 values for sgemm, or int8.
struct NarrowLinear {
    enum class Kind { bf16_avx512, bf16_float32, int8 } kind = Kind::bf16_float32;
    Bf16Panels panels;
    std::vector<float> rounded;
    Int8Weights int8;
};

/// The buffers of one forward pass, kept between passes of one thread so that a run of many groups
/// allocates (and page-faults) once, not per group. Sized by forward(); any contents.
struct ForwardScratch {
    std::vector<float> q, k, v, ctx, attn, inter, scores;
    std::vector<std::uint32_t> pairs;  ///< activations packed as bf16 pairs (bf16 layers)
    std::vector<float> rounded;        ///< activations rounded to bf16 for sgemm (bf16_float32)
    Int8Rows int8;                     ///< activations quantized (int8 layers)
};

class BertModel {
public:
    /// Loads model.safetensors of `model_dir` (tensor names with or without a "bert." or
    /// "roberta." prefix).
    static BertModel load(const std::string& model_dir);

    const BertConfig& config() const { return config_; }

    /// Converts the linear layers' weights for `precision`, once, before the first forward();
    /// bf16 and int8 release their float32 copies (layers() then holds only the biases and
    /// LayerNorms). Under int8, the layers in `int8_layers` (LinearLayer bits) are int8 and the
    /// others bf16. Throws UsageError when called twice with different precisions, Error for
    /// bf16_avx512 on a CPU without AVX512-BF16 and int8_kernel on a CPU path without an int8 kernel (f32).
    void set_linear_precision(LinearPrecision precision, unsigned int8_layers = 0);
    LinearPrecision linear_precision() const { return precision_; }

    /// Runs the encoder on `n_seqs` token sequences and writes their last hidden states, one
    /// row of `hidden` floats per token, sequences concatenated in order (sum of lengths rows).
    /// Sequences are attended separately (no padding). Each length must be 1..max_tokens().
    void forward(const std::vector<const std::vector<std::int32_t>*>& seqs, std::vector<float>& hidden_out) const;
    /// The same, with the caller's buffers (one ForwardScratch per thread at a time).
    void forward(const std::vector<const std::vector<std::int32_t>*>& seqs, std::vector<float>& hidden_out,
                 ForwardScratch& scratch) const;

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
    struct NarrowLayer {
        NarrowLinear q, k, v, attn_out, inter, out;
    };
    std::vector<NarrowLayer> narrow_layers_;
};

}  // namespace novelty::encoder
