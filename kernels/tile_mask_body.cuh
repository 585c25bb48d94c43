// The rules of the tile mask (tile_mask.cuh) as functions of one tile entry, shared by the real
// kernel and the emulated device. CUDA-free: included by host code too.
#pragma once

#include <cstdint>

#include "host_device.cuh"

namespace novelty::kernels {

struct TileMask {
    /// Per tile query: corpus rows [0, row_limit[r]) are searchable. Null: all are.
    const std::int64_t* row_limit = nullptr;
    /// Per tile query: corpus rows below row_begin[r] are not searchable. Null: none are cut.
    const std::int64_t* row_begin = nullptr;
    /// The corpus row of tile column 0.
    std::int64_t first_col = 0;
    /// Self-join: tile query r is corpus row self_row0 + r, which is masked. -1: no self rows.
    std::int64_t self_row0 = -1;
    /// Excluded rows as CSR: query r's excluded corpus rows are
    /// excluded_rows[excluded_offsets[r] .. excluded_offsets[r + 1]). Null: none.
    const std::int64_t* excluded_offsets = nullptr;
    const std::int64_t* excluded_rows = nullptr;
    /// Row filters as bitmasks: tile query r may find corpus row c only when bit c % 64 of word
    /// c / 64 of filter filter_index[r] is set; filter f's words start at filter_words +
    /// f * filter_stride. filter_index[r] < 0: no filter for that query. Null: no filters.
    const std::int32_t* filter_index = nullptr;
    const std::uint64_t* filter_words = nullptr;
    std::int64_t filter_stride = 0;
};

/// Tile row r's first column past its row limit (columns from it on are masked); n_cols when
/// there is no limit.
NOVELTY_HD inline std::int64_t mask_limit_column(const TileMask& m, std::int64_t r, std::int64_t n_cols) {
    if (m.row_limit == nullptr) return n_cols;
    const std::int64_t first = m.row_limit[r] - m.first_col;
    return first < 0 ? 0 : first;
}

/// Tile row r's first column at or past its row begin (columns before it are masked); 0 when
/// there is no begin.
NOVELTY_HD inline std::int64_t mask_begin_column(const TileMask& m, std::int64_t r, std::int64_t n_cols) {
    if (m.row_begin == nullptr) return 0;
    const std::int64_t end = m.row_begin[r] - m.first_col;
    return end > n_cols ? n_cols : end;
}

/// Whether tile row r has a row filter.
NOVELTY_HD inline bool mask_has_filter(const TileMask& m, std::int64_t r) {
    return m.filter_index != nullptr && m.filter_index[r] >= 0;
}

/// Whether tile row r's filter allows column c (call only when mask_has_filter).
NOVELTY_HD inline bool mask_filter_allows(const TileMask& m, std::int64_t r, std::int64_t c) {
    const std::uint64_t* words = m.filter_words + m.filter_index[r] * m.filter_stride;
    const std::int64_t column_row = m.first_col + c;
    return ((words[column_row >> 6] >> (column_row & 63)) & 1u) != 0;
}

/// The columns of tile row r masked one by one (its own row, its excluded rows), each passed
/// to `mask_column` when it lies in [0, n_cols).
template <typename MaskColumn>
NOVELTY_HD inline void mask_single_columns(const TileMask& m, std::int64_t r, std::int64_t n_cols,
                                           MaskColumn mask_column) {
    if (m.self_row0 >= 0) {
        const std::int64_t c = m.self_row0 + r - m.first_col;
        if (c >= 0 && c < n_cols) mask_column(c);
    }
    if (m.excluded_offsets != nullptr) {
        for (std::int64_t e = m.excluded_offsets[r]; e < m.excluded_offsets[r + 1]; ++e) {
            const std::int64_t c = m.excluded_rows[e] - m.first_col;
            if (c >= 0 && c < n_cols) mask_column(c);
        }
    }
}

}  // namespace novelty::kernels
