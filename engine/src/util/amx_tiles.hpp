// The tile configuration both AMX kernels use (int8_gemm_amx.cpp, bf16_gemm_amx.cpp): eight tiles
// of 16 rows of 64 bytes, tiles 0..3 the sums of (row tile i, panel j) in tile 2i + j, 4 and 5
// the two row tiles of x, 6 and 7 the two panels. Include only after the including file's
// `#pragma GCC target("amx-tile,...")`, inside its AMX-compiled part. Internal to engine/src/util.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace novelty::amx {

/// The 64-byte operand of ldtilecfg (palette 1).
struct alignas(64) TileConfig {
    std::uint8_t palette = 1;
    std::uint8_t start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
};

/// Loads the configuration above on the calling thread (which must hold the AMX permission:
/// cpu_path.hpp requests it before any AMX path is chosen).
inline void configure_tiles() {
    TileConfig config;
    for (int t = 0; t < 8; ++t) {
        config.colsb[t] = 64;
        config.rows[t] = 16;
    }
    _tile_loadconfig(&config);
}

}  // namespace novelty::amx
