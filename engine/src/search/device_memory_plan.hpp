// How the CUDA backend divides its device memory budget: the parts it sets aside when it is
// made, the work buffers one call needs, whether the corpus can stay resident beside them,
// how large streamed chunks are, and the smallest budget that works for a call. Plain
// arithmetic, shared with nothing CUDA, so it is tested on the CPU
// (tests/engine/search/device_memory_plan_test.cpp).
#pragma once

#include "search/search_rules.hpp"

#include <cstddef>

namespace novelty {

/// The parts of a device memory budget (bytes) the CUDA backend sets aside when it is made.
struct DeviceBudget {
    std::size_t total = 0;
    std::size_t sims = 0;              ///< similarity tiles, all buffers together: min(2 GiB, total / 4)
    std::size_t candidates = 0;        ///< a batch's running candidates: min(1 GiB, total / 8)
    std::size_t select_workspace = 0;  ///< the selection's workspace pool: min(1 GiB, total / 8)
    std::size_t staging = 0;           ///< each of two upload staging buffers: min(64 MiB, total / 16)
};

DeviceBudget split_device_budget(std::size_t total);

/// One search call as the plan sees it.
struct DeviceSearchShape {
    std::size_t n_queries = 0;     ///< at least 1
    std::size_t n_rows = 0;        ///< rows searched (a self-join's prefix)
    std::size_t corpus_rows = 0;   ///< rows of the whole corpus, which a resident copy holds
    std::size_t dim = 0;
    std::size_t k = 0;
    std::size_t storage_bytes = 2; ///< bytes per stored value: 2 (f16, bf16) or 4 (f32)
    std::size_t sims_buffers = 2;  ///< 2 when each GEMM runs a tile ahead, else 1
};

struct DeviceMemoryPlan {
    DeviceTilePlan tiles;
    /// Similarity tiles, tile and merge buffers, the batch's candidates, queries and
    /// re-scoring buffers, the selection workspace and two staging buffers.
    std::size_t work_bytes = 0;
    std::size_t room = 0;          ///< total - work_bytes (0 when the work alone exceeds it)
    bool resident_fits = false;    ///< the whole corpus (corpus_rows) fits in room
    /// Rows per chunk when the corpus is streamed through two chunk buffers sharing room:
    /// min(n_rows, room / 2 / row bytes).
    std::size_t chunk_rows = 0;
    /// Streaming works: a chunk holds a whole corpus tile, or every searched row.
    bool streaming_fits = false;
    bool feasible() const { return resident_fits || streaming_fits; }
};

/// The plan for `shape` under `budget`; tile sizes as plan_device_tiles() gives them.
DeviceMemoryPlan plan_device_memory(const DeviceBudget& budget, const DeviceSearchShape& shape,
                                    const SearchTuning& tuning);

/// The smallest budget, in whole MiB, at which plan_device_memory(split_device_budget(...))
/// is feasible for `shape` (what to suggest for --device-memory). The parts of a budget grow
/// with it, so this is found by search (doubling, then bisection), not by adding up one plan's
/// shortfall; the budget returned is always feasible.
std::size_t smallest_feasible_budget_mib(const DeviceSearchShape& shape, const SearchTuning& tuning);

}  // namespace novelty
