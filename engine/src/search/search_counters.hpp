// A test hook: how many search indexes this process has built (each one loads its corpus once;
// a CUDA index uploads it to the device once). Tests check that a run builds one index and
// serves every later call from it.
#pragma once

#include <cstddef>

namespace novelty {

/// Search indexes built so far in this process, by any backend.
std::size_t search_indexes_built();

}  // namespace novelty
