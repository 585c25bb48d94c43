// The progress callback every long operation takes (searches, self-joins, imports, embedding).
#pragma once

#include <cstddef>
#include <functional>

namespace novelty {

/// Progress callback: units done, units total. Called from the calling thread; an exception it
/// throws stops the operation and propagates.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

}  // namespace novelty
