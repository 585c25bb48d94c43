// The CUDA text encoder: the CPU's tokenizer (run on CPU threads, the next chunk of texts while
// the device encodes the current one), then the whole forward pass on the device over packed
// sequences, pooling and L2 normalisation, in batches sized by a token budget and the memory
// budget. Weights in float16 or bfloat16, float32 accumulation.
#include "encoder/cuda_encoder.hpp"

#include "encoder/cuda/device_weights.hpp"
#include "encoder/encoder_parts.hpp"
#include "device/device.hpp"
#include "encoder_kernels_body.cuh"
#include "novelty/util/error.hpp"
#include "util/parallel_for.hpp"

#include <algorithm>
#include <future>
#include <mutex>

namespace novelty::encoder {

namespace {

using novelty::cuda::DeviceBuffer;
using novelty::cuda::PinnedBuffer;
using novelty::cuda::Stream;

constexpr std::size_t texts_per_chunk = 4096;  // tokenised ahead while the device works

/// Activation buffers for batches of up to `tokens` tokens.
struct Activations {
    std::size_t tokens = 0;
    DeviceBuffer x, x_half, qkv, ctx_half, y, inter, inter_half, pooled;
    DeviceBuffer ids, positions, seq_start, seq_len, offsets, tiles;
    PinnedBuffer host_ints, host_out;

    /// Device and pinned host bytes per token of the buffers below.
    static std::size_t bytes_per_token(const BertConfig& c) { return 32 * c.hidden + 6 * c.intermediate + 64; }
    Activations(dev::Device& d, const BertConfig& c, std::size_t t)
        : tokens(t), x(d, t * c.hidden * 4), x_half(d, t * c.hidden * 2), qkv(d, t * c.hidden * 12),
          ctx_half(d, t * c.hidden * 2), y(d, t * c.hidden * 4), inter(d, t * c.intermediate * 4),
          inter_half(d, t * c.intermediate * 2), pooled(d, t * c.hidden * 4), ids(d, t * 4), positions(d, t * 4),
          seq_start(d, t * 4), seq_len(d, t * 4), offsets(d, (t + 1) * 4), tiles(d, 3 * t * 4),
          host_ints(d, (8 * t + 1) * 4), host_out(d, t * c.hidden * 4) {}
};

class CudaEncoder final : public Embedder {
public:
    CudaEncoder(const std::string& model_dir, const EncoderOptions& options)
        : name_(model_name(model_dir)), tokenizer_(ModelTokenizer::load(model_dir)), pooling_(read_pooling(model_dir)),
          options_(options), device_(dev::select_device(options.device == "cuda-emulated")), stream_(device_),
          gemm_(device_.make_blas()) {
        if (device_.count() == 0) throw UsageError("the CUDA encoder needs a CUDA device, but none is available", "device");
        const BertModel model = BertModel::load(model_dir);
        config_ = model.config();
        check_lengths(model_dir, tokenizer_, config_);
        if (config_.hidden / config_.heads > 256)
            throw InputError(model_dir, 0, "the CUDA encoder supports attention heads of at most 256 dimensions");
        weights_ = cuda::upload_weights(device_, model, element(options.device_storage), stream_.get());
        std::size_t free_bytes = 0, total_bytes = 0;
        device_.memory_info(free_bytes, total_bytes);
        const std::size_t budget = options.device_memory > 0 ? options.device_memory : free_bytes / 4;
        const std::size_t fit = budget / Activations::bytes_per_token(config_);
        const std::size_t tokens = std::min(options.device_tokens_per_batch, fit);
        if (tokens < tokenizer_.max_length())
            throw UsageError("the CUDA encoder's memory budget (" + std::to_string(budget >> 20) + " MiB) holds " +
                                 std::to_string(fit) + " tokens, fewer than one text of " +
                                 std::to_string(tokenizer_.max_length()) + " tokens",
                             "device_memory");
        act_ = std::make_unique<Activations>(device_, config_, tokens);
        const bool tiled_ok = kernels::tiled_attention_supported(config_.hidden / config_.heads);
        if (options.device_attention == "tiled" && !tiled_ok)
            throw UsageError("the tiled attention kernel needs a head dimension of 32 or 64", "device_attention");
        if (options.device_attention != "auto" && options.device_attention != "tiled" && options.device_attention != "warp")
            throw UsageError("device_attention must be auto, tiled or warp, not '" + options.device_attention + "'",
                             "device_attention");
        tiled_ = options.device_attention != "warp" && tiled_ok;
    }

    std::string name() const override { return name_; }
    std::size_t dim() const override { return config_.hidden; }
    std::string pooling() const override { return pooling_name(pooling_); }
    std::string device() const override { return device_.name(); }

    /// One call at a time (the activation buffers are shared); tokenisation of the next chunk
    /// overlaps the device's work on the current one.
    std::vector<float> embed(const std::vector<std::string>& texts) override {
        const std::lock_guard<std::mutex> lock(mutex_);
        std::vector<float> out(texts.size() * config_.hidden);
        auto tokenize = [&](std::size_t begin) {
            const std::size_t end = std::min(texts.size(), begin + texts_per_chunk);
            std::vector<std::vector<std::int32_t>> tokens(end - begin);
            parallel_for_blocks(tokens.size(), options_.threads,
                                [&](std::size_t i) { tokens[i] = tokenizer_.encode(texts[begin + i]); });
            return tokens;
        };
        if (texts.empty()) return out;
        auto next = std::async(std::launch::async, tokenize, std::size_t{0});
        for (std::size_t begin = 0; begin < texts.size(); begin += texts_per_chunk) {
            std::vector<std::vector<std::int32_t>> tokens = next.get();
            if (begin + texts_per_chunk < texts.size())
                next = std::async(std::launch::async, tokenize, begin + texts_per_chunk);
            encode_chunk(tokens, out.data() + begin * config_.hidden);
        }
        return out;
    }

private:
    static kernels::Element element(const std::string& storage) {
        if (storage == "f16") return kernels::Element::f16;
        if (storage == "bf16") return kernels::Element::bf16;
        throw UsageError("the CUDA encoder holds weights as f16 or bf16, not '" + storage + "'", "device_storage");
    }

    void encode_chunk(const std::vector<std::vector<std::int32_t>>& tokens, float* out) {
        const TokenGroups g = group_by_tokens(tokens, act_->tokens);
        for (const auto& [begin, end] : g.groups) {
            std::vector<const std::vector<std::int32_t>*> seqs;
            for (std::size_t i = begin; i < end; ++i) seqs.push_back(&tokens[g.order[i]]);
            const float* pooled = run_batch(seqs);
            for (std::size_t i = begin; i < end; ++i)
                std::copy(pooled + (i - begin) * config_.hidden, pooled + (i - begin + 1) * config_.hidden,
                          out + g.order[i] * config_.hidden);
        }
    }

    /// Uploads ids, positions and the packing of `seqs`; returns the token count.
    std::size_t upload_batch(const std::vector<const std::vector<std::int32_t>*>& seqs) {
        std::size_t n_tokens = 0;
        for (const auto* s : seqs) n_tokens += s->size();
        auto* ints = static_cast<std::int32_t*>(act_->host_ints.get());
        std::int32_t *ids = ints, *pos = ints + n_tokens, *start = ints + 2 * n_tokens, *len = ints + 3 * n_tokens;
        std::int32_t* offsets = ints + 4 * n_tokens;
        std::size_t t = 0;
        offsets[0] = 0;
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            const std::vector<std::size_t> p = position_ids(config_, *seqs[s]);
            for (std::size_t k = 0; k < seqs[s]->size(); ++k, ++t) {
                const std::int32_t id = (*seqs[s])[k];
                if (id < 0 || static_cast<std::size_t>(id) >= config_.vocab_size) throw UsageError("token id out of range");
                ids[t] = id;
                pos[t] = static_cast<std::int32_t>(p[k]);
                start[t] = offsets[s];
                len[t] = static_cast<std::int32_t>(seqs[s]->size());
            }
            offsets[s + 1] = static_cast<std::int32_t>(t);
        }
        n_tiles_ = 0;
        std::int32_t* tiles = offsets + seqs.size() + 1;  // three arrays of up to n_tokens tiles
        for (std::size_t s = 0; s < seqs.size(); ++s)
            for (std::size_t q = 0; q < seqs[s]->size(); q += kernels::attention_query_tile, ++n_tiles_) {
                tiles[n_tiles_] = offsets[s];
                tiles[n_tokens + n_tiles_] = static_cast<std::int32_t>(seqs[s]->size());
                tiles[2 * n_tokens + n_tiles_] = static_cast<std::int32_t>(q);
            }
        const dev::Stream st = stream_.get();
        const std::size_t b = n_tokens * 4;
        const auto in = dev::Copy::host_to_device;
        device_.copy(act_->tiles.get(), tiles, 3 * b, in, st);
        device_.copy(act_->ids.get(), ids, b, in, st);
        device_.copy(act_->positions.get(), pos, b, in, st);
        device_.copy(act_->seq_start.get(), start, b, in, st);
        device_.copy(act_->seq_len.get(), len, b, in, st);
        device_.copy(act_->offsets.get(), offsets, (seqs.size() + 1) * 4, in, st);
        return n_tokens;
    }

    void run_layer(const cuda::DeviceLayer& l, std::size_t n) {
        const std::size_t h = config_.hidden, inter = config_.intermediate;
        const dev::Stream st = stream_.get();
        const kernels::Element type = weights_.type;
        Activations& a = *act_;
        const bool qkv_bias = gemm_->linear(st, type, l.qkv_w.get(), l.qkv_b.as<float>(), a.x_half.get(), n, h, 3 * h, a.qkv.as<float>());
        dev::AttentionArgs attention;
        attention.qkv_d = a.qkv.as<float>();
        attention.qkv_bias_d = qkv_bias ? nullptr : l.qkv_b.as<float>();
        attention.seq_start_d = a.seq_start.as<std::int32_t>();
        attention.seq_len_d = a.seq_len.as<std::int32_t>();
        attention.n_tokens = n;
        const auto* tiles = a.tiles.as<std::int32_t>();
        attention.tile_seq_start_d = tiles;
        attention.tile_seq_len_d = tiles + n;
        attention.tile_q_begin_d = tiles + 2 * n;
        attention.n_tiles = n_tiles_;
        attention.h = h;
        attention.heads = config_.heads;
        attention.ctx_d = a.ctx_half.get();
        attention.type = type;
        device_.attention(attention, tiled_, st);
        const bool ao_bias = gemm_->linear(st, type, l.attn_out_w.get(), l.attn_out_b.as<float>(), a.ctx_half.get(), n, h, h, a.y.as<float>());
        device_.add_layer_norm(a.y.as<float>(), ao_bias ? nullptr : l.attn_out_b.as<float>(), a.x.as<float>(), n, h,
                                       l.attn_ln_g.as<float>(), l.attn_ln_b.as<float>(), config_.layer_norm_eps, a.x_half.get(), type, st);
        const bool in_bias = gemm_->linear(st, type, l.inter_w.get(), l.inter_b.as<float>(), a.x_half.get(), n, h, inter, a.inter.as<float>());
        device_.bias_act_convert(a.inter.as<float>(), in_bias ? nullptr : l.inter_b.as<float>(), true, n, inter,
                                         a.inter_half.get(), type, st);
        const bool out_bias = gemm_->linear(st, type, l.out_w.get(), l.out_b.as<float>(), a.inter_half.get(), n, inter, h, a.y.as<float>());
        device_.add_layer_norm(a.y.as<float>(), out_bias ? nullptr : l.out_b.as<float>(), a.x.as<float>(), n, h,
                                       l.out_ln_g.as<float>(), l.out_ln_b.as<float>(), config_.layer_norm_eps, a.x_half.get(), type, st);
    }

    /// The pooled, normalised vectors of `seqs` (host memory, seqs.size() x hidden).
    const float* run_batch(const std::vector<const std::vector<std::int32_t>*>& seqs) {
        const std::size_t n = upload_batch(seqs), h = config_.hidden;
        const dev::Stream st = stream_.get();
        Activations& a = *act_;
        device_.embed_layer_norm(a.ids.as<std::int32_t>(), a.positions.as<std::int32_t>(), n, weights_.word.get(),
                                         weights_.pos.get(), weights_.type_row.get(), weights_.emb_ln_g.as<float>(),
                                         weights_.emb_ln_b.as<float>(), config_.layer_norm_eps, h, a.x.as<float>(),
                                         a.x_half.get(), weights_.type, st);
        for (const cuda::DeviceLayer& layer : weights_.layers) run_layer(layer, n);
        device_.pool(a.x.as<float>(), a.offsets.as<std::int32_t>(), seqs.size(), h, pooling_ == Pooling::cls,
                     a.pooled.as<float>(), st);
        device_.normalize_rows(a.pooled.as<float>(), a.pooled.get(), dev::Element::f32, seqs.size(), h, nullptr, st);
        device_.copy(a.host_out.get(), a.pooled.get(), seqs.size() * h * 4, dev::Copy::device_to_host, st);
        stream_.synchronize();
        return static_cast<const float*>(a.host_out.get());
    }

    std::string name_;
    ModelTokenizer tokenizer_;
    Pooling pooling_;
    EncoderOptions options_;
    BertConfig config_;
    dev::Device& device_;
    Stream stream_;
    std::unique_ptr<dev::Blas> gemm_;
    cuda::DeviceWeights weights_;
    std::unique_ptr<Activations> act_;
    bool tiled_ = true;           // which attention kernel
    std::size_t n_tiles_ = 0;     // query tiles of the batch being run
    std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Embedder> make_cuda_encoder(const std::string& model_dir, const EncoderOptions& options) {
    return std::make_unique<CudaEncoder>(model_dir, options);
}

}  // namespace novelty::encoder
