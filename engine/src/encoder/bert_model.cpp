#include "encoder/bert_model.hpp"

#include "io/json/json_parse.hpp"

#include "encoder/fast_math.hpp"
#include "encoder/safetensors.hpp"
#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"

#include <cblas.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace novelty::encoder {

namespace fs = std::filesystem;

BertConfig read_bert_config(const std::string& model_dir) {
    const std::string path = (fs::path(model_dir) / "config.json").string();
    std::ifstream in(path);
    if (!in) throw InputError(path, 0, "cannot open the model's config.json");
    nlohmann::json j;
    try {
        j = parse_json(std::string(std::istreambuf_iterator<char>(in), {}));
    } catch (const JsonError& e) {
        throw InputError(path, 0, std::string("invalid JSON: ") + e.what());
    }
    BertConfig c;
    try {
        c.vocab_size = j.at("vocab_size").get<std::size_t>();
        c.hidden = j.at("hidden_size").get<std::size_t>();
        c.layers = j.at("num_hidden_layers").get<std::size_t>();
        c.heads = j.at("num_attention_heads").get<std::size_t>();
        c.intermediate = j.at("intermediate_size").get<std::size_t>();
        c.max_positions = j.at("max_position_embeddings").get<std::size_t>();
        c.type_vocab = j.value("type_vocab_size", std::size_t{2});
        c.layer_norm_eps = j.value("layer_norm_eps", 1e-12f);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path, 0, std::string("missing or invalid key: ") + e.what());
    }
    const std::string type = j.value("model_type", "bert");
    if (type == "roberta" || type == "xlm-roberta" || type == "camembert") {
        c.roberta_positions = true;
        c.padding_idx = j.value("pad_token_id", 1);
        if (c.padding_idx < 0 || static_cast<std::size_t>(c.padding_idx) + 2 > c.max_positions)
            throw InputError(path, 0, "pad_token_id leaves no room in max_position_embeddings");
    } else if (type != "bert") {
        throw InputError(path, 0, "model_type '" + type + "' is not supported (bert, roberta, xlm-roberta)");
    }
    const std::string act = j.value("hidden_act", "gelu");
    if (act != "gelu") throw InputError(path, 0, "hidden_act '" + act + "' is not supported (only gelu)");
    const std::string positions = j.value("position_embedding_type", "absolute");
    if (positions != "absolute")
        throw InputError(path, 0, "position_embedding_type '" + positions + "' is not supported (only absolute)");
    if (c.heads == 0 || c.hidden % c.heads != 0)
        throw InputError(path, 0, "hidden_size must be a multiple of num_attention_heads");
    return c;
}

BertModel BertModel::load(const std::string& model_dir) {
    BertModel m;
    m.config_ = read_bert_config(model_dir);
    const BertConfig& c = m.config_;
    const fs::path weights = fs::path(model_dir) / "model.safetensors";
    std::error_code ec;
    if (!fs::exists(weights, ec) && fs::exists(fs::path(model_dir) / "pytorch_model.bin", ec))
        throw InputError(weights.string(), 0,
                         "missing: only pytorch_model.bin is there, which is not read; convert it once with "
                         "transformers (AutoModel.from_pretrained(d).save_pretrained(d, safe_serialization=True))");
    const SafeTensors st = SafeTensors::open(weights.string());
    std::string prefix;
    for (const char* candidate : {"bert.", "roberta."})
        if (!st.has("embeddings.word_embeddings.weight") && st.has(std::string(candidate) + "embeddings.word_embeddings.weight"))
            prefix = candidate;
    auto get = [&](const std::string& name, std::vector<std::size_t> shape) { return st.floats(prefix + name, shape); };
    m.word_emb_ = get("embeddings.word_embeddings.weight", {c.vocab_size, c.hidden});
    m.pos_emb_ = get("embeddings.position_embeddings.weight", {c.max_positions, c.hidden});
    m.type_emb_ = get("embeddings.token_type_embeddings.weight", {c.type_vocab, c.hidden});
    m.emb_ln_g_ = get("embeddings.LayerNorm.weight", {c.hidden});
    m.emb_ln_b_ = get("embeddings.LayerNorm.bias", {c.hidden});
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        BertLayer layer;
        layer.q_w = get(p + "attention.self.query.weight", {c.hidden, c.hidden});
        layer.q_b = get(p + "attention.self.query.bias", {c.hidden});
        layer.k_w = get(p + "attention.self.key.weight", {c.hidden, c.hidden});
        layer.k_b = get(p + "attention.self.key.bias", {c.hidden});
        layer.v_w = get(p + "attention.self.value.weight", {c.hidden, c.hidden});
        layer.v_b = get(p + "attention.self.value.bias", {c.hidden});
        layer.attn_out_w = get(p + "attention.output.dense.weight", {c.hidden, c.hidden});
        layer.attn_out_b = get(p + "attention.output.dense.bias", {c.hidden});
        layer.attn_ln_g = get(p + "attention.output.LayerNorm.weight", {c.hidden});
        layer.attn_ln_b = get(p + "attention.output.LayerNorm.bias", {c.hidden});
        layer.inter_w = get(p + "intermediate.dense.weight", {c.intermediate, c.hidden});
        layer.inter_b = get(p + "intermediate.dense.bias", {c.intermediate});
        layer.out_w = get(p + "output.dense.weight", {c.hidden, c.intermediate});
        layer.out_b = get(p + "output.dense.bias", {c.hidden});
        layer.out_ln_g = get(p + "output.LayerNorm.weight", {c.hidden});
        layer.out_ln_b = get(p + "output.LayerNorm.bias", {c.hidden});
        m.layers_.push_back(std::move(layer));
    }
    return m;
}

namespace {

// y[n x out] = x[n x in] * W^T + b, with W stored [out x in] as PyTorch's Linear.
void linear(const float* x, std::size_t n, std::size_t in, const std::vector<float>& w, const std::vector<float>& b,
            std::size_t out, float* y) {
    for (std::size_t r = 0; r < n; ++r) std::copy(b.begin(), b.end(), y + r * out);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(out), static_cast<int>(in),
                1.0f, x, static_cast<int>(in), w.data(), static_cast<int>(in), 1.0f, y, static_cast<int>(out));
}

// y[n x out] = x * W^T + b with `w`'s narrow operands (bf16_gemm.hpp, int8_gemm.hpp).
void linear_narrow(const float* x, std::size_t n, std::size_t in, const NarrowLinear& w, const std::vector<float>& b,
                   std::size_t out, float* y, ForwardScratch& scratch) {
    switch (w.kind) {
        case NarrowLinear::Kind::bf16_avx512:
            scratch.pairs.resize(n * ((in + 1) / 2));
            pack_bf16_rows(x, n, in, scratch.pairs.data());
            bf16_gemm_best(scratch.pairs.data(), n, w.panels, b.data(), y);
            return;
        case NarrowLinear::Kind::int8:
            quantize_int8_rows(x, n, in, w.int8.path, scratch.int8,
                               w.int8.input_factor.empty() ? nullptr : w.int8.input_factor.data());
            int8_gemm(scratch.int8, w.int8, b.data(), y);
            return;
        case NarrowLinear::Kind::bf16_float32:
            scratch.rounded.resize(n * in);
            for (std::size_t i = 0; i < n * in; ++i) scratch.rounded[i] = round_to_bf16(x[i]);
            linear(scratch.rounded.data(), n, in, w.rounded, b, out, y);
            return;
    }
}

// Per input of a linear layer fed by a LayerNorm (gamma, beta): the factor its activations are
// multiplied by, and its weight column divided by, before int8 quantization (int8_gemm.hpp's
// input_factor). LayerNorm's output is about gamma[i] n + beta[i] with n of unit scale, so
// |gamma[i]| + |beta[i]| stands for the size of input i in every token; the factor
// sqrt(max_o |W[o][i]| / (|gamma[i]| + |beta[i]|)) evens the sizes of activations and weights
// between them (SmoothQuant's migration with alpha = 1/2, from the weights alone: no calibration
// data). An input without a size (a zero) keeps factor 1.
std::vector<float> smoothing_factors(const std::vector<float>& w, std::size_t out, std::size_t in,
                                     const std::vector<float>& gamma, const std::vector<float>& beta) {
    std::vector<float> factor(in, 1.0f);
    for (std::size_t i = 0; i < in; ++i) {
        float w_max = 0.0f;
        for (std::size_t o = 0; o < out; ++o) w_max = std::max(w_max, std::fabs(w[o * in + i]));
        const float a = std::fabs(gamma[i]) + std::fabs(beta[i]);
        const float f = std::sqrt(w_max / a);
        if (w_max > 0.0f && a > 0.0f && std::isfinite(f) && f > 0.0f) factor[i] = f;
    }
    return factor;
}

// The LayerNorm in front of a linear layer, for smoothing_factors; null members for none.
struct FeedingNorm {
    const std::vector<float>* gamma = nullptr;
    const std::vector<float>* beta = nullptr;
};

// The narrow form of one weight [out x in] (int8 laid out for `int8_path`, smoothed when a
// LayerNorm feeds it); the float32 copy is released.
NarrowLinear to_narrow_linear(std::vector<float>& w, std::size_t out, std::size_t in, NarrowLinear::Kind kind,
                              Int8Path int8_path, FeedingNorm norm = {}) {
    NarrowLinear l;
    l.kind = kind;
    if (kind == NarrowLinear::Kind::bf16_avx512) {
        l.panels = pack_bf16_panels(w.data(), out, in);
    } else if (kind == NarrowLinear::Kind::int8) {
        const std::vector<float> factor =
            norm.gamma ? smoothing_factors(w, out, in, *norm.gamma, *norm.beta) : std::vector<float>();
        l.int8 = quantize_int8_weights(w.data(), out, in, int8_path, factor.empty() ? nullptr : factor.data());
    } else {
        l.rounded.resize(w.size());
        for (std::size_t i = 0; i < w.size(); ++i) l.rounded[i] = round_to_bf16(w[i]);
    }
    std::vector<float>().swap(w);
    return l;
}

// Self-attention of one sequence (rows [start, start + len) of q, k, v), head by head, in blocks of
// query rows so that the scores of a long sequence stay small (block x len floats).
void attend(const float* q, const float* k, const float* v, std::size_t start, std::size_t len, std::size_t h,
            std::size_t heads, float* ctx, std::vector<float>& scores) {
    constexpr std::size_t block = 256;
    const std::size_t head_dim = h / heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    scores.resize(std::min(len, block) * len);
    for (std::size_t head = 0; head < heads; ++head) {
        const float* kh = k + start * h + head * head_dim;
        const float* vh = v + start * h + head * head_dim;
        for (std::size_t r0 = 0; r0 < len; r0 += block) {
            const std::size_t rows = std::min(block, len - r0);
            const float* qh = q + (start + r0) * h + head * head_dim;
            float* ch = ctx + (start + r0) * h + head * head_dim;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(len),
                        static_cast<int>(head_dim), scale, qh, static_cast<int>(h), kh, static_cast<int>(h), 0.0f,
                        scores.data(), static_cast<int>(len));
            softmax_rows(scores.data(), rows, len);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(head_dim),
                        static_cast<int>(len), 1.0f, scores.data(), static_cast<int>(len), vh, static_cast<int>(h),
                        0.0f, ch, static_cast<int>(h));
        }
    }
}

// x[r] = LayerNorm(x[r] + residual[r]) for each of n rows of `dim` values.
void add_layer_norm(float* x, const float* residual, std::size_t n, std::size_t dim, const std::vector<float>& gamma,
                    const std::vector<float>& beta, float eps) {
    for (std::size_t r = 0; r < n; ++r) {
        float* row = x + r * dim;
        if (residual)
            for (std::size_t c = 0; c < dim; ++c) row[c] += residual[r * dim + c];
        double mean = 0;
        for (std::size_t c = 0; c < dim; ++c) mean += row[c];
        mean /= static_cast<double>(dim);
        double var = 0;
        for (std::size_t c = 0; c < dim; ++c) var += (row[c] - mean) * (row[c] - mean);
        var /= static_cast<double>(dim);
        const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
        const float m = static_cast<float>(mean);
        for (std::size_t c = 0; c < dim; ++c) row[c] = (row[c] - m) * inv * gamma[c] + beta[c];
    }
}

}  // namespace

std::vector<std::size_t> position_ids(const BertConfig& config, const std::vector<std::int32_t>& ids) {
    std::vector<std::size_t> out(ids.size());
    std::size_t counted = 0;
    for (std::size_t p = 0; p < ids.size(); ++p) {
        if (!config.roberta_positions) {
            out[p] = p;
        } else if (ids[p] == config.padding_idx) {
            out[p] = static_cast<std::size_t>(config.padding_idx);
        } else {
            out[p] = static_cast<std::size_t>(config.padding_idx) + ++counted;
        }
    }
    return out;
}

void BertModel::set_linear_precision(LinearPrecision precision, unsigned int8_layers) {
    if (precision == precision_) return;
    if (precision_ != LinearPrecision::f32)
        throw UsageError("the encoder's linear precision is set once (its float32 weights are released)");
    if (precision == LinearPrecision::bf16_avx512 && !bf16_kernel_runs())
        throw Error("bf16 products by AVX512-BF16 were asked for on a CPU without AVX512-BF16");
    if (precision == LinearPrecision::int8_kernel && !int8_kernel_available())
        throw Error(std::string("int8 products by a kernel were asked for on the CPU path ") +
                    cpu_path_name(cpu_path()) + ", which has none");
    using Kind = NarrowLinear::Kind;
    const bool int8 = precision == LinearPrecision::int8_kernel || precision == LinearPrecision::int8_float32;
    const Int8Path int8_path = precision == LinearPrecision::int8_kernel ? Int8Path::vnni : Int8Path::float32;
    // Both int8 paths give their bf16 layers the CPU's best bf16 path, so that they agree bit for bit.
    const Kind bf16_kind = precision == LinearPrecision::bf16_avx512 || (int8 && bf16_kernel_available())
                               ? Kind::bf16_avx512
                               : Kind::bf16_float32;
    auto kind_of = [&](LinearLayer which) { return int8 && (int8_layers & which) ? Kind::int8 : bf16_kind; };
    const std::size_t h = config_.hidden, inter = config_.intermediate;
    narrow_layers_.clear();
    FeedingNorm block_input{&emb_ln_g_, &emb_ln_b_};  // the block's input: the previous block's last LayerNorm
    for (BertLayer& layer : layers_) {
        NarrowLayer b;
        b.q = to_narrow_linear(layer.q_w, h, h, kind_of(linear_query), int8_path, block_input);
        b.k = to_narrow_linear(layer.k_w, h, h, kind_of(linear_key), int8_path, block_input);
        b.v = to_narrow_linear(layer.v_w, h, h, kind_of(linear_value), int8_path, block_input);
        b.attn_out = to_narrow_linear(layer.attn_out_w, h, h, kind_of(linear_attention_out), int8_path);
        b.inter = to_narrow_linear(layer.inter_w, inter, h, kind_of(linear_intermediate), int8_path,
                                   FeedingNorm{&layer.attn_ln_g, &layer.attn_ln_b});
        block_input = FeedingNorm{&layer.out_ln_g, &layer.out_ln_b};
        b.out = to_narrow_linear(layer.out_w, h, inter, kind_of(linear_output), int8_path);
        narrow_layers_.push_back(std::move(b));
    }
    precision_ = precision;
}

void BertModel::forward(const std::vector<const std::vector<std::int32_t>*>& seqs, std::vector<float>& x) const {
    ForwardScratch scratch;
    forward(seqs, x, scratch);
}

void BertModel::forward(const std::vector<const std::vector<std::int32_t>*>& seqs, std::vector<float>& x,
                        ForwardScratch& scratch) const {
    const BertConfig& c = config_;
    const std::size_t h = c.hidden;
    std::size_t n_tokens = 0;
    for (const auto* seq : seqs) {
        if (seq->empty() || seq->size() > c.max_tokens())
            throw UsageError("a token sequence must have 1.." + std::to_string(c.max_tokens()) + " tokens, not " +
                             std::to_string(seq->size()));
        n_tokens += seq->size();
    }
    // Embeddings: word + position + token type 0, then LayerNorm.
    x.assign(n_tokens * h, 0.0f);
    std::size_t t = 0;
    for (const auto* seq : seqs) {
        const std::vector<std::size_t> positions = position_ids(c, *seq);
        for (std::size_t p = 0; p < seq->size(); ++p, ++t) {
            const std::int32_t id = (*seq)[p];
            if (id < 0 || static_cast<std::size_t>(id) >= c.vocab_size) throw UsageError("token id out of range");
            float* row = x.data() + t * h;
            const float* w = word_emb_.data() + static_cast<std::size_t>(id) * h;
            const float* pe = pos_emb_.data() + positions[p] * h;
            for (std::size_t d = 0; d < h; ++d) row[d] = w[d] + pe[d] + type_emb_[d];
        }
    }
    add_layer_norm(x.data(), nullptr, n_tokens, h, emb_ln_g_, emb_ln_b_, c.layer_norm_eps);

    // Every element of these is written before it is read (sgemm with beta 1 starts from the
    // bias rows; attention writes every context row): resize keeps old contents and capacity.
    std::vector<float>&q = scratch.q, &k = scratch.k, &v = scratch.v, &ctx = scratch.ctx, &attn = scratch.attn;
    std::vector<float>&inter = scratch.inter, &scores = scratch.scores;
    for (std::vector<float>* buf : {&q, &k, &v, &ctx, &attn}) buf->resize(n_tokens * h);
    inter.resize(n_tokens * c.intermediate);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        const BertLayer& layer = layers_[l];
        // One linear layer at this model's precision: `f32_w` or its narrow form `narrow_w`.
        auto dense = [&](const float* in_rows, std::size_t in, const std::vector<float>& f32_w,
                         const NarrowLinear& narrow_w, const std::vector<float>& b, std::size_t out, float* y) {
            if (precision_ == LinearPrecision::f32)
                linear(in_rows, n_tokens, in, f32_w, b, out, y);
            else
                linear_narrow(in_rows, n_tokens, in, narrow_w, b, out, y, scratch);
        };
        static const NarrowLayer no_narrow{};
        const NarrowLayer& lb = precision_ == LinearPrecision::f32 ? no_narrow : narrow_layers_[l];
        dense(x.data(), h, layer.q_w, lb.q, layer.q_b, h, q.data());
        dense(x.data(), h, layer.k_w, lb.k, layer.k_b, h, k.data());
        dense(x.data(), h, layer.v_w, lb.v, layer.v_b, h, v.data());
        std::size_t start = 0;
        for (const auto* seq : seqs) {
            attend(q.data(), k.data(), v.data(), start, seq->size(), h, c.heads, ctx.data(), scores);
            start += seq->size();
        }
        dense(ctx.data(), h, layer.attn_out_w, lb.attn_out, layer.attn_out_b, h, attn.data());
        add_layer_norm(attn.data(), x.data(), n_tokens, h, layer.attn_ln_g, layer.attn_ln_b, c.layer_norm_eps);
        dense(attn.data(), h, layer.inter_w, lb.inter, layer.inter_b, c.intermediate, inter.data());
        gelu_in_place(inter.data(), inter.size());
        dense(inter.data(), c.intermediate, layer.out_w, lb.out, layer.out_b, h, x.data());
        add_layer_norm(x.data(), attn.data(), n_tokens, h, layer.out_ln_g, layer.out_ln_b, c.layer_norm_eps);
    }
}

}  // namespace novelty::encoder
