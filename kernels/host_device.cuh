// NOVELTY_HD marks the per-element bodies of kernels (kernels/*_body.cuh) that both the real
// kernel (nvcc: __host__ __device__) and the emulated device (engine/src/device/emulated, g++:
// plain host code) call, so that the two run one arithmetic. The body headers include no CUDA
// header and use only what both compilers offer (fmaf, fminf, INFINITY).
#pragma once

#if defined(__CUDACC__)
#define NOVELTY_HD __host__ __device__
#else
#define NOVELTY_HD
#endif

#include <math.h>

#include <cstdint>

namespace novelty::kernels {

/// The lanes of a warp.
constexpr int warp_lanes = 32;

/// Lane `lane`'s share of a warp's dot product: lanes stride over the dimension (element c goes
/// to lane c % 32) with fused multiply-adds; `row_value(c)` reads element c of the row as
/// float32. The warp then adds the 32 partial sums by an xor butterfly (offsets 16, 8, 4, 2, 1):
/// __shfl_xor_sync on a card, warp_butterfly_sum in the emulator, the same sums in the same order.
template <typename RowValue>
NOVELTY_HD inline float lane_dot(const float* query, RowValue row_value, std::int64_t dim, int lane) {
    float sum = 0.0f;
    for (std::int64_t c = lane; c < dim; c += warp_lanes) sum = fmaf(query[c], row_value(c), sum);
    return sum;
}

/// As lane_dot for the squared norm of a row.
template <typename RowValue>
NOVELTY_HD inline float lane_square_sum(RowValue row_value, std::int64_t dim, int lane) {
    float sum = 0.0f;
    for (std::int64_t c = lane; c < dim; c += warp_lanes) {
        const float v = row_value(c);
        sum = fmaf(v, v, sum);
    }
    return sum;
}

/// The host's reading of a warp's xor-butterfly sum of 32 lane values: lane 0's result.
inline float warp_butterfly_sum(float (&lanes)[warp_lanes]) {
    for (int offset = warp_lanes / 2; offset > 0; offset /= 2) {
        float next[warp_lanes];
        for (int l = 0; l < warp_lanes; ++l) next[l] = lanes[l] + lanes[l ^ offset];
        for (int l = 0; l < warp_lanes; ++l) lanes[l] = next[l];
    }
    return lanes[0];
}

/// A candidate entry passes a threshold filter when it is at or above the threshold and not
/// -inf (an empty or masked slot never passes).
NOVELTY_HD inline bool passes_threshold(float value, float threshold) { return value >= threshold && value != -INFINITY; }

}  // namespace novelty::kernels
