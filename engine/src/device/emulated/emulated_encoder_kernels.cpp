// The encoder's kernels on the emulated device: host twins of encoder_kernels.cu. Sums follow
// the card's order where the card's order is set by the code (block sums of 256 threads, the
// tiled attention's sequential dot); the card's fast intrinsics (__expf, rsqrtf) are
// the host's exact exp and 1/sqrt here, so a twin's values may differ from a card's in the last
// bits (tests/gpu/emulator_twin_test.cpp compares them on a card).
// The encoder's attention mask is the packing: a query attends to the keys of its own sequence
// only, [seq_start, seq_start + seq_len), as on a card.
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "device/emulated/emulated_device.hpp"
#include "encoder_kernels_body.cuh"
#include "novelty/util/error.hpp"
#include "util/parallel_for.hpp"

namespace novelty::dev::emulated {

namespace {

constexpr std::size_t block_threads = 256;

/// One float per thread summed as a block of 256 threads does on a card.
float block_sum(const std::array<float, block_threads>& per_thread) {
    float warp_sums[kernels::warp_lanes] = {};
    for (std::size_t w = 0; w < block_threads / kernels::warp_lanes; ++w) {
        float lanes[kernels::warp_lanes];
        for (int l = 0; l < kernels::warp_lanes; ++l) lanes[l] = per_thread[w * kernels::warp_lanes + l];
        warp_sums[w] = kernels::warp_butterfly_sum(lanes);
    }
    return kernels::warp_butterfly_sum(warp_sums);
}

/// layer_norm_row of encoder_kernels.cu over row (h values, in place), writing `half` too.
void layer_norm_row(float* row, std::size_t h, const float* gamma, const float* beta, float eps, void* half,
                    std::size_t half_offset, Element type) {
    std::array<float, block_threads> partial{};
    for (std::size_t c = 0; c < h; ++c) partial[c % block_threads] += row[c];
    const float mean = block_sum(partial) / static_cast<float>(h);
    std::fill(partial.begin(), partial.end(), 0.0f);
    for (std::size_t c = 0; c < h; ++c) partial[c % block_threads] += (row[c] - mean) * (row[c] - mean);
    const float inv = 1.0f / std::sqrt(block_sum(partial) / static_cast<float>(h) + eps);
    for (std::size_t c = 0; c < h; ++c) {
        const float out = (row[c] - mean) * inv * gamma[c] + beta[c];
        row[c] = out;
        store_value(half, type, half_offset + c, out);
    }
}

/// Attention of one query (q: d values, scaled) over keys [start, start + len) of one head,
/// with the online softmax of the card's kernels; `dot(j)` is the query's product with key j.
template <typename Dot>
void attend(std::size_t start, std::size_t len, std::size_t d, const float* qkv, std::size_t h, std::size_t head,
            const float* bv, Dot dot, float* acc) {
    float running_max = -std::numeric_limits<float>::infinity(), running_sum = 0.0f;
    for (std::size_t c = 0; c < d; ++c) acc[c] = 0.0f;
    for (std::size_t j = start; j < start + len; ++j) {
        const float s = dot(j);
        const float new_max = std::fmax(running_max, s);
        const float correction = std::exp(running_max - new_max);
        const float p = std::exp(s - new_max);
        running_sum = running_sum * correction + p;
        const float* v = qkv + j * 3 * h + 2 * h + head * d;
        for (std::size_t c = 0; c < d; ++c) acc[c] = acc[c] * correction + p * (v[c] + (bv ? bv[c] : 0.0f));
        running_max = new_max;
    }
    for (std::size_t c = 0; c < d; ++c) acc[c] /= running_sum;
}

}  // namespace

void EmulatedDevice::embed_layer_norm(const std::int32_t* ids_d, const std::int32_t* positions_d, std::size_t n_tokens,
                                      const void* word_d, const void* pos_d, const void* type_row_d,
                                      const float* gamma_d, const float* beta_d, float eps, std::size_t h, float* x_d,
                                      void* half_d, Element type, Stream) {
    if (n_tokens == 0) return;
    check(x_d, n_tokens * h * sizeof(float), "embed_layer_norm's output");
    parallel_for_blocks(n_tokens, 0, [&](std::size_t t) {
        float* row = x_d + t * h;
        const std::size_t w = static_cast<std::size_t>(ids_d[t]) * h, p = static_cast<std::size_t>(positions_d[t]) * h;
        for (std::size_t c = 0; c < h; ++c)
            row[c] = load_value(word_d, type, w + c) + load_value(pos_d, type, p + c) + load_value(type_row_d, type, c);
        layer_norm_row(row, h, gamma_d, beta_d, eps, half_d, t * h, type);
    });
}

void EmulatedDevice::add_layer_norm(const float* y_d, const float* bias_d, float* x_d, std::size_t n_tokens,
                                    std::size_t h, const float* gamma_d, const float* beta_d, float eps, void* half_d,
                                    Element type, Stream) {
    if (n_tokens == 0) return;
    check(y_d, n_tokens * h * sizeof(float), "add_layer_norm's input");
    check(x_d, n_tokens * h * sizeof(float), "add_layer_norm's residual");
    parallel_for_blocks(n_tokens, 0, [&](std::size_t t) {
        float* row = x_d + t * h;
        for (std::size_t c = 0; c < h; ++c) row[c] += y_d[t * h + c] + (bias_d != nullptr ? bias_d[c] : 0.0f);
        layer_norm_row(row, h, gamma_d, beta_d, eps, half_d, t * h, type);
    });
}

void EmulatedDevice::bias_act_convert(const float* y_d, const float* bias_d, bool gelu, std::size_t n_tokens,
                                      std::size_t cols, void* out_d, Element type, Stream) {
    const std::size_t n = n_tokens * cols;
    if (n == 0) return;
    check(y_d, n * sizeof(float), "bias_act_convert's input");
    check(out_d, n * static_cast<std::size_t>(kernels::element_bytes(type)), "bias_act_convert's output");
    parallel_for_blocks(n_tokens, 0, [&](std::size_t t) {
        std::vector<float> row(cols);
        for (std::size_t c = 0; c < cols; ++c) row[c] = kernels::bias_act(y_d, bias_d, gelu, cols, t * cols + c);
        store_values(static_cast<unsigned char*>(out_d) + t * cols * static_cast<std::size_t>(kernels::element_bytes(type)),
                     type, cols, row.data());
    });
}

void EmulatedDevice::attention(const AttentionArgs& a, bool tiled, Stream) {
    if (a.heads == 0 || a.h % a.heads != 0) throw Error("attention: the head dimension must divide h");
    const std::size_t d = a.h / a.heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    check(a.qkv_d, a.n_tokens * 3 * a.h * sizeof(float), "attention's qkv");
    // Query token t of sequence [start, start + len) for one head, the query-key dot summed in
    // the head's dimension order (the tiled kernel's order; the packed kernel splits it over a
    // warp's lanes, which the twin does not reproduce: its exp differs from __expf anyway).
    auto one_query = [&](std::size_t t, std::size_t start, std::size_t len, std::size_t head) {
        std::vector<float> q(d), acc(d);
        const float* bq = a.qkv_bias_d ? a.qkv_bias_d + head * d : nullptr;
        const float* bk = a.qkv_bias_d ? a.qkv_bias_d + a.h + head * d : nullptr;
        const float* bv = a.qkv_bias_d ? a.qkv_bias_d + 2 * a.h + head * d : nullptr;
        for (std::size_t c = 0; c < d; ++c) q[c] = (a.qkv_d[t * 3 * a.h + head * d + c] + (bq ? bq[c] : 0.0f)) * scale;
        auto dot = [&](std::size_t j) {
            const float* k = a.qkv_d + j * 3 * a.h + a.h + head * d;
            float s = 0.0f;
            for (std::size_t c = 0; c < d; ++c) s += q[c] * (k[c] + (bk ? bk[c] : 0.0f));
            return s;
        };
        attend(start, len, d, a.qkv_d, a.h, head, bv, dot, acc.data());
        for (std::size_t c = 0; c < d; ++c) store_value(a.ctx_d, a.type, t * a.h + head * d + c, acc[c]);
    };
    if (!tiled) {
        parallel_for_blocks(a.n_tokens, 0, [&](std::size_t t) {
            for (std::size_t head = 0; head < a.heads; ++head)
                one_query(t, static_cast<std::size_t>(a.seq_start_d[t]), static_cast<std::size_t>(a.seq_len_d[t]), head);
        });
        return;
    }
    parallel_for_blocks(a.n_tiles, 0, [&](std::size_t tile) {
        const auto start = static_cast<std::size_t>(a.tile_seq_start_d[tile]);
        const auto len = static_cast<std::size_t>(a.tile_seq_len_d[tile]);
        const auto q_begin = static_cast<std::size_t>(a.tile_q_begin_d[tile]);
        for (std::size_t qi = q_begin; qi < std::min(len, q_begin + kernels::attention_query_tile); ++qi)
            for (std::size_t head = 0; head < a.heads; ++head) one_query(start + qi, start, len, head);
    });
}

void EmulatedDevice::pool(const float* x_d, const std::int32_t* offsets_d, std::size_t n_seqs, std::size_t h, bool cls,
                          float* out_d, Stream) {
    if (n_seqs == 0) return;
    check(out_d, n_seqs * h * sizeof(float), "pool's output");
    for (std::size_t s = 0; s < n_seqs; ++s)
        for (std::size_t c = 0; c < h; ++c) out_d[s * h + c] = kernels::pooled_value(x_d, offsets_d, h, cls, s, c);
}

}  // namespace novelty::dev::emulated
