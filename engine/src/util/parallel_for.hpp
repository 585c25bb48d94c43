// Runs fn(block) for every block in [0, n_blocks) on `threads` worker threads, handing blocks out
// one at a time. Progress is reported from the calling thread (about 5 times a second and at the
// end). The first exception thrown by fn stops the remaining blocks and is rethrown here.
#pragma once

#include "novelty/util/progress.hpp"

#include <cstddef>
#include <functional>

namespace novelty {

/// 0 -> the number of hardware threads (at least 1).
std::size_t resolve_threads(std::size_t requested);

void parallel_for_blocks(std::size_t n_blocks, std::size_t threads, const std::function<void(std::size_t)>& fn,
                         const ProgressFn& progress = {});

/// memcpy of `bytes` bytes, split into 4 MiB pieces copied on all cores when there are more than
/// two of them (one thread cannot fill the memory bandwidth of a large machine); smaller copies
/// run on the calling thread. The ranges must not overlap.
void parallel_copy(void* dst, const void* src, std::size_t bytes);

}  // namespace novelty
