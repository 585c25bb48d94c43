// The CUDA search pipeline for one call, in named parts (engine/src/search/cuda/tiled_search.cpp):
//   the device corpus   resident rows, or two chunk buffers filled on the copy stream;
//   the query batch     queries in the storage type, their scope as the mask kernel's arrays;
//   the tile selector   per query tile and corpus tile: GEMM, mask, filter or full select, merge;
//   the finisher        float32 re-scoring of each query's final k, copy back, host ordering.
// Internal to engine/src/search/cuda.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "search/cuda/device_context.hpp"
#include "search/scope_rules.hpp"
#include "novelty/search/search.hpp"

namespace novelty::cuda {

/// One top-k call: host float32 queries (search) or the corpus's own rows (self-join: query i
/// is row i, itself masked by its scope).
struct TiledSearchArgs {
    const VectorView* corpus = nullptr;   ///< the index's rows
    std::size_t n_rows = 0;               ///< rows searched: the corpus, or a self-join's prefix
    const float* host_queries = nullptr;  ///< n_queries x dim, normalised; null for a self-join
    std::size_t n_queries = 0;
    std::size_t k = 0;
    /// The rows each query may find, over rows [0, n_rows); uploaded per batch as the mask
    /// kernel's arrays (the one place the CUDA pipeline applies a scope).
    const ScopeRules* scope = nullptr;
    const SearchTuning* tuning = nullptr;
    const ProgressFn* progress = nullptr;
};

/// Runs the call on ctx's device and stream. The result follows TopK's ordering rules. With
/// 16-bit storage and a resident corpus, each query's final k are re-scored on the device with
/// its float32 query; `rescored_on_device` tells the caller whether that happened (a streamed
/// 16-bit search leaves it to the caller, on the host).
TopK tiled_search(DeviceContext& ctx, const TiledSearchArgs& args, bool& rescored_on_device);

}  // namespace novelty::cuda
