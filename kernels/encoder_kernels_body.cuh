// The per-element bodies of the encoder's kernels (encoder_kernels.cuh) that the real kernels
// and the emulated device share. CUDA-free.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device.cuh"

namespace novelty::kernels {

/// Queries per tile of the tiled attention kernel.
constexpr int attention_query_tile = 64;

/// Whether the tiled attention kernel handles heads of `head_dim` dimensions (32 or 64).
inline bool tiled_attention_supported(std::size_t head_dim) { return head_dim == 32 || head_dim == 64; }

/// Value i of the [n x cols] activation y plus its column's bias (bias may be null), through the
/// exact (erf) GELU when `gelu`.
NOVELTY_HD inline float bias_act(const float* y, const float* bias, bool gelu, std::size_t cols, std::size_t i) {
    float v = y[i] + (bias != nullptr ? bias[i % cols] : 0.0f);
    if (gelu) v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    return v;
}

/// Column c of sequence s's pooled vector: its first token (cls) or the mean of its tokens
/// x[offsets[s] .. offsets[s + 1]) summed in token order.
NOVELTY_HD inline float pooled_value(const float* x, const std::int32_t* offsets, std::size_t h, bool cls,
                                     std::size_t s, std::size_t c) {
    const std::size_t begin = static_cast<std::size_t>(offsets[s]), end = static_cast<std::size_t>(offsets[s + 1]);
    if (cls) return x[begin * h + c];
    float sum = 0.0f;
    for (std::size_t t = begin; t < end; ++t) sum += x[t * h + c];
    return sum / static_cast<float>(end - begin);
}

}  // namespace novelty::kernels
