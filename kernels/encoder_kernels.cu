#include "encoder_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda_check.cuh"

namespace novelty::kernels {

namespace {

constexpr int block_threads = 256;

__device__ inline void store_half(void* out, std::size_t i, float v, Element type) {
    if (type == Element::f16) static_cast<__half*>(out)[i] = __float2half_rn(v);
    else static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(v);
}

__device__ inline float load_half(const void* in, std::size_t i, Element type) {
    if (type == Element::f16) return __half2float(static_cast<const __half*>(in)[i]);
    return __bfloat162float(static_cast<const __nv_bfloat16*>(in)[i]);
}

/// Block-wide sum of one float per thread (blockDim.x a multiple of 32, at most 1024).
__device__ float block_sum(float v) {
    __shared__ float partial[32];
    __shared__ float total;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float s = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) total = s;
    }
    __syncthreads();
    const float result = total;
    __syncthreads();
    return result;
}

/// Layer norm of the row `row` (h values, already in place in x) with two passes over it.
__device__ void layer_norm_row(float* row, std::size_t h, const float* gamma, const float* beta, float eps,
                               void* half, std::size_t half_offset, Element type) {
    float s = 0.0f;
    for (std::size_t c = threadIdx.x; c < h; c += blockDim.x) s += row[c];
    const float mean = block_sum(s) / static_cast<float>(h);
    float v = 0.0f;
    for (std::size_t c = threadIdx.x; c < h; c += blockDim.x) v += (row[c] - mean) * (row[c] - mean);
    const float inv = rsqrtf(block_sum(v) / static_cast<float>(h) + eps);
    for (std::size_t c = threadIdx.x; c < h; c += blockDim.x) {
        const float out = (row[c] - mean) * inv * gamma[c] + beta[c];
        row[c] = out;
        store_half(half, half_offset + c, out, type);
    }
}

__global__ void embed_layer_norm_kernel(const std::int32_t* ids, const std::int32_t* positions, const void* word,
                                        const void* pos, const void* type_row, const float* gamma,
                                        const float* beta, float eps, std::size_t h, float* x, void* half,
                                        Element type) {
    const std::size_t t = blockIdx.x;
    float* row = x + t * h;
    const std::size_t w = static_cast<std::size_t>(ids[t]) * h, p = static_cast<std::size_t>(positions[t]) * h;
    for (std::size_t c = threadIdx.x; c < h; c += blockDim.x)
        row[c] = load_half(word, w + c, type) + load_half(pos, p + c, type) + load_half(type_row, c, type);
    __syncthreads();
    layer_norm_row(row, h, gamma, beta, eps, half, t * h, type);
}

__global__ void add_layer_norm_kernel(const float* y, const float* bias, float* x, std::size_t h, const float* gamma,
                                      const float* beta, float eps, void* half, Element type) {
    const std::size_t t = blockIdx.x;
    float* row = x + t * h;
    for (std::size_t c = threadIdx.x; c < h; c += blockDim.x)
        row[c] += y[t * h + c] + (bias != nullptr ? bias[c] : 0.0f);
    __syncthreads();
    layer_norm_row(row, h, gamma, beta, eps, half, t * h, type);
}

__global__ void bias_act_convert_kernel(const float* y, const float* bias, bool gelu, std::size_t n, std::size_t cols,
                                        void* out, Element type) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        store_half(out, i, bias_act(y, bias, gelu, cols, i), type);
    }
}

/// One warp per (token, head): lane l holds dimensions l, l + 32, ... of the query and of the
/// running output; keys are visited one at a time with an online softmax.
constexpr int max_dims_per_lane = 8;  // head_dim <= 256

__global__ void packed_attention_kernel(const float* qkv, const float* qkv_bias, const std::int32_t* seq_start,
                                        const std::int32_t* seq_len, std::size_t n_tokens, std::size_t h,
                                        std::size_t heads, float scale, void* ctx, Element type) {
    const std::size_t warp_global = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (warp_global >= n_tokens * heads) return;
    const std::size_t t = warp_global / heads, head = warp_global % heads;
    const std::size_t d = h / heads, stride = 3 * h;
    const std::size_t start = static_cast<std::size_t>(seq_start[t]), len = static_cast<std::size_t>(seq_len[t]);
    const float* bq = qkv_bias != nullptr ? qkv_bias + head * d : nullptr;
    const float* bk = qkv_bias != nullptr ? qkv_bias + h + head * d : nullptr;
    const float* bv = qkv_bias != nullptr ? qkv_bias + 2 * h + head * d : nullptr;
    float q[max_dims_per_lane], acc[max_dims_per_lane];
    for (int i = 0; i < max_dims_per_lane; ++i) {
        const std::size_t c = lane + 32 * i;
        q[i] = c < d ? (qkv[t * stride + head * d + c] + (bq ? bq[c] : 0.0f)) * scale : 0.0f;
        acc[i] = 0.0f;
    }
    float running_max = -INFINITY, running_sum = 0.0f;
    for (std::size_t j = start; j < start + len; ++j) {
        const float* k = qkv + j * stride + h + head * d;
        float dot = 0.0f;
        for (int i = 0; i < max_dims_per_lane; ++i) {
            const std::size_t c = lane + 32 * i;
            if (c < d) dot += q[i] * (k[c] + (bk ? bk[c] : 0.0f));
        }
        for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
        const float new_max = fmaxf(running_max, dot);
        const float correction = __expf(running_max - new_max);
        const float p = __expf(dot - new_max);
        running_sum = running_sum * correction + p;
        const float* v = qkv + j * stride + 2 * h + head * d;
        for (int i = 0; i < max_dims_per_lane; ++i) {
            const std::size_t c = lane + 32 * i;
            if (c < d) acc[i] = acc[i] * correction + p * (v[c] + (bv ? bv[c] : 0.0f));
        }
        running_max = new_max;
    }
    for (int i = 0; i < max_dims_per_lane; ++i) {
        const std::size_t c = lane + 32 * i;
        if (c < d) store_half(ctx, t * h + head * d + c, acc[i] / running_sum, type);
    }
}

/// One thread per query of a tile of attention_query_tile queries; keys and values of the
/// sequence pass through shared memory, key_tile of them at a time (2 x 16 KB).
template <int D>
__global__ void __launch_bounds__(attention_query_tile)
tiled_attention_kernel(const float* qkv, const float* qkv_bias, const std::int32_t* tile_seq_start,
                       const std::int32_t* tile_seq_len, const std::int32_t* tile_q_begin, std::size_t h, float scale,
                       void* ctx, Element type) {
    constexpr int key_tile = 4096 / D;
    __shared__ float ks[key_tile * D];
    __shared__ float vs[key_tile * D];
    const std::size_t tile = blockIdx.x, head = blockIdx.y, stride = 3 * h;
    const std::size_t start = static_cast<std::size_t>(tile_seq_start[tile]);
    const int len = tile_seq_len[tile];
    const int qi = tile_q_begin[tile] + static_cast<int>(threadIdx.x);
    const bool active = qi < len;
    const float* bq = qkv_bias != nullptr ? qkv_bias + head * D : nullptr;
    const float* bk = qkv_bias != nullptr ? qkv_bias + h + head * D : nullptr;
    const float* bv = qkv_bias != nullptr ? qkv_bias + 2 * h + head * D : nullptr;
    float q[D], acc[D];
#pragma unroll
    for (int c = 0; c < D; ++c) {
        q[c] = active ? (qkv[(start + qi) * stride + head * D + c] + (bq ? bq[c] : 0.0f)) * scale : 0.0f;
        acc[c] = 0.0f;
    }
    float running_max = -INFINITY, running_sum = 0.0f;
    for (int k0 = 0; k0 < len; k0 += key_tile) {
        const int nk = min(key_tile, len - k0);
        __syncthreads();  // the previous tile is no longer read
        for (int i = threadIdx.x; i < nk * D; i += blockDim.x) {
            const int j = i / D, c = i % D;
            const std::size_t row = (start + static_cast<std::size_t>(k0 + j)) * stride + head * D + c;
            ks[i] = qkv[row + h] + (bk ? bk[c] : 0.0f);
            vs[i] = qkv[row + 2 * h] + (bv ? bv[c] : 0.0f);
        }
        __syncthreads();
        if (!active) continue;
        for (int j = 0; j < nk; ++j) {
            float dot = 0.0f;
#pragma unroll
            for (int c = 0; c < D; ++c) dot += q[c] * ks[j * D + c];
            const float new_max = fmaxf(running_max, dot);
            const float correction = __expf(running_max - new_max);
            const float p = __expf(dot - new_max);
            running_sum = running_sum * correction + p;
#pragma unroll
            for (int c = 0; c < D; ++c) acc[c] = acc[c] * correction + p * vs[j * D + c];
            running_max = new_max;
        }
    }
    if (!active) return;
#pragma unroll
    for (int c = 0; c < D; ++c) store_half(ctx, (start + qi) * h + head * D + c, acc[c] / running_sum, type);
}

__global__ void pool_kernel(const float* x, const std::int32_t* offsets, std::size_t h, bool cls, float* out) {
    const std::size_t s = blockIdx.x;
    for (std::size_t c = threadIdx.x; c < h; c += blockDim.x) out[s * h + c] = pooled_value(x, offsets, h, cls, s, c);
}

unsigned grid_for(std::size_t n) {
    const std::size_t blocks = (n + block_threads - 1) / block_threads;
    return static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}

}  // namespace

void launch_embed_layer_norm(const std::int32_t* ids, const std::int32_t* positions, std::size_t n_tokens,
                             const void* word, const void* pos, const void* type_row, const float* gamma,
                             const float* beta, float eps, std::size_t h, float* x, void* half, Element type,
                             cudaStream_t stream) {
    if (n_tokens == 0) return;
    embed_layer_norm_kernel<<<static_cast<unsigned>(n_tokens), block_threads, 0, stream>>>(
        ids, positions, word, pos, type_row, gamma, beta, eps, h, x, half, type);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

void launch_add_layer_norm(const float* y, const float* bias, float* x, std::size_t n_tokens, std::size_t h,
                           const float* gamma, const float* beta, float eps, void* half, Element type,
                           cudaStream_t stream) {
    if (n_tokens == 0) return;
    add_layer_norm_kernel<<<static_cast<unsigned>(n_tokens), block_threads, 0, stream>>>(y, bias, x, h, gamma, beta,
                                                                                        eps, half, type);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

void launch_bias_act_convert(const float* y, const float* bias, bool gelu, std::size_t n_tokens, std::size_t cols,
                             void* out, Element type, cudaStream_t stream) {
    const std::size_t n = n_tokens * cols;
    if (n == 0) return;
    bias_act_convert_kernel<<<grid_for(n), block_threads, 0, stream>>>(y, bias, gelu, n, cols, out, type);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

void launch_packed_attention(const float* qkv, const float* qkv_bias, const std::int32_t* seq_start,
                             const std::int32_t* seq_len, std::size_t n_tokens, std::size_t h, std::size_t heads,
                             void* ctx, Element type, cudaStream_t stream) {
    if (n_tokens == 0) return;
    if (heads == 0 || h % heads != 0 || h / heads > 32 * max_dims_per_lane)
        throw KernelError("packed attention: head dimension must divide h and be at most 256");
    const float scale = 1.0f / sqrtf(static_cast<float>(h / heads));
    const std::size_t threads = n_tokens * heads * 32;
    const auto blocks = static_cast<unsigned>((threads + block_threads - 1) / block_threads);
    packed_attention_kernel<<<blocks, block_threads, 0, stream>>>(qkv, qkv_bias, seq_start, seq_len, n_tokens, h,
                                                                  heads, scale, ctx, type);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

void launch_tiled_attention(const float* qkv, const float* qkv_bias, const std::int32_t* tile_seq_start,
                            const std::int32_t* tile_seq_len, const std::int32_t* tile_q_begin, std::size_t n_tiles,
                            std::size_t h, std::size_t heads, void* ctx, Element type, cudaStream_t stream) {
    if (n_tiles == 0) return;
    if (heads == 0 || h % heads != 0 || !tiled_attention_supported(h / heads))
        throw KernelError("tiled attention: the head dimension must be 32 or 64");
    const float scale = 1.0f / sqrtf(static_cast<float>(h / heads));
    const dim3 grid(static_cast<unsigned>(n_tiles), static_cast<unsigned>(heads));
    if (h / heads == 32)
        tiled_attention_kernel<32><<<grid, attention_query_tile, 0, stream>>>(qkv, qkv_bias, tile_seq_start, tile_seq_len,
                                                                              tile_q_begin, h, scale, ctx, type);
    else
        tiled_attention_kernel<64><<<grid, attention_query_tile, 0, stream>>>(qkv, qkv_bias, tile_seq_start, tile_seq_len,
                                                                              tile_q_begin, h, scale, ctx, type);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

void launch_pool(const float* x, const std::int32_t* offsets, std::size_t n_seqs, std::size_t h, bool cls, float* out,
                 cudaStream_t stream) {
    if (n_seqs == 0) return;
    pool_kernel<<<static_cast<unsigned>(n_seqs), block_threads, 0, stream>>>(x, offsets, h, cls, out);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace novelty::kernels
