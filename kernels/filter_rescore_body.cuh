// The job of the 16-bit tile filter (filter_rescore.cuh), CUDA-free so that the device layer
// (engine/src/device) and the emulated device name it.
#pragma once

#include <cstdint>

#include "element_type.cuh"
#include "host_device.cuh"

namespace novelty::kernels {

struct FilterRescoreJob {
    const void* tile = nullptr;
    Element tile_type = Element::f32;  ///< f32 or f16
    std::int64_t n_rows = 0, n_cols = 0;
    float* cand_vals = nullptr;
    std::int64_t* cand_idx = nullptr;
    std::int64_t cand_ld = 0, k = 0, capacity = 0, idx_offset = 0;
    float margin = 0;
    bool fresh = false;
    const float* queries = nullptr;  ///< n_rows x dim float32
    const void* rows = nullptr;      ///< the stored rows, indexed by column + idx_offset
    Element row_type = Element::f16;
    std::int64_t dim = 0;
    int* overflow = nullptr;
};

}  // namespace novelty::kernels
