// The per-entry rule of place_columns.cuh, shared by the real kernel and the emulated device.
#pragma once

#include <cstdint>

#include "host_device.cuh"

namespace novelty::kernels {

/// Entry i of the n_rows x n_total destination block (row i / n_total, column i % n_total):
/// the source entry (its index + idx_offset, or -1 when its value is -inf) for columns below
/// n_src, an empty slot (-inf / -1) after them.
NOVELTY_HD inline void place_column_entry(const float* src_vals, const std::int64_t* src_idx, std::int64_t n_src,
                                          float* dst_vals, std::int64_t* dst_idx, std::int64_t dst_ld,
                                          std::int64_t dst_col, std::int64_t n_total, std::int64_t idx_offset,
                                          std::int64_t i) {
    const std::int64_t r = i / n_total;
    const std::int64_t c = i % n_total;
    float value = -INFINITY;
    std::int64_t index = -1;
    if (c < n_src) {
        value = src_vals[r * n_src + c];
        if (value != -INFINITY) index = src_idx[r * n_src + c] + idx_offset;
    }
    dst_vals[r * dst_ld + dst_col + c] = value;
    dst_idx[r * dst_ld + dst_col + c] = index;
}

}  // namespace novelty::kernels
