// Kernels of the CUDA text encoder (engine/src/encoder/cuda/): a BERT-family forward pass over
// packed variable-length sequences (no padding: the tokens of all sequences of a batch are
// concatenated, T tokens in all, and each sequence attends only to itself).
//
// Layout: hidden states are row-major [T x h]; the residual stream `x` is float32, and a 16-bit
// copy (`half`: float16 or bfloat16 per `type`) feeds the next GEMM. Weights are 16-bit; biases,
// layer-norm parameters and all arithmetic are float32. All pointers are device pointers; the
// work is queued on `stream`, nothing is synchronised; a failed launch throws KernelError.
#pragma once

#include <cuda_runtime_api.h>

#include "encoder_kernels_body.cuh"

#include <cstddef>
#include <cstdint>

#include "element_type.cuh"

namespace novelty::kernels {

/// x[t] = LayerNorm(word[ids[t]] + pos[positions[t]] + type_row) over h values, written as
/// float32 to `x` and as `type` to `half`. word/pos/type_row are tables of `type` values.
void launch_embed_layer_norm(const std::int32_t* ids, const std::int32_t* positions, std::size_t n_tokens,
                             const void* word, const void* pos, const void* type_row, const float* gamma,
                             const float* beta, float eps, std::size_t h, float* x, void* half, Element type,
                             cudaStream_t stream);

/// x[t] = LayerNorm(y[t] + bias + x[t]) (bias may be null when a GEMM epilogue added it), written
/// to `x` (float32) and `half` (`type`).
void launch_add_layer_norm(const float* y, const float* bias, float* x, std::size_t n_tokens, std::size_t h,
                           const float* gamma, const float* beta, float eps, void* half, Element type,
                           cudaStream_t stream);

/// out[t][c] = act(y[t][c] + bias[c]) as `type`, act = exact (erf) GELU when `gelu`, else the
/// identity; bias may be null. y is [n_tokens x cols] float32.
void launch_bias_act_convert(const float* y, const float* bias, bool gelu, std::size_t n_tokens, std::size_t cols,
                             void* out, Element type, cudaStream_t stream);

/// Self-attention of packed sequences. qkv is [T x 3h] float32 (Q | K | V per token, biases not
/// yet added when qkv_bias is non-null; qkv_bias has 3h values). seq_start[t] and seq_len[t] give
/// the sequence of token t. ctx[t] (as `type`, [T x h]) = softmax(q_t K^T / sqrt(d)) V per head,
/// d = h / heads, d <= 256, computed in float32 with an online softmax (no T x T scores).
void launch_packed_attention(const float* qkv, const float* qkv_bias, const std::int32_t* seq_start,
                             const std::int32_t* seq_len, std::size_t n_tokens, std::size_t h, std::size_t heads,
                             void* ctx, Element type, cudaStream_t stream);

/// As launch_packed_attention, one thread per query instead of one warp: the queries of a
/// sequence are cut into tiles of 64 (tile t: sequence start tile_seq_start[t], length
/// tile_seq_len[t], first query tile_q_begin[t], the query index within its sequence), and each
/// block (tile, head) streams the sequence's keys and values through shared memory in tiles,
/// with an online softmax per thread. Head dimension 32 or 64 only (tiled_attention_supported).
void launch_tiled_attention(const float* qkv, const float* qkv_bias, const std::int32_t* tile_seq_start,
                            const std::int32_t* tile_seq_len, const std::int32_t* tile_q_begin, std::size_t n_tiles,
                            std::size_t h, std::size_t heads, void* ctx, Element type, cudaStream_t stream);

/// out[s] (float32, h values) = the first token of sequence s (cls) or the mean of its tokens,
/// for the n_seqs sequences whose tokens are x[offsets[s] .. offsets[s+1]). Not normalised.
void launch_pool(const float* x, const std::int32_t* offsets, std::size_t n_seqs, std::size_t h, bool cls,
                 float* out, cudaStream_t stream);

}  // namespace novelty::kernels
