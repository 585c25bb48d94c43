// Choosing the search backend from a --device name, one code path for every command and the
// server.
#pragma once

#include "novelty/search.hpp"

#include <memory>
#include <string>

namespace novelty {

/// The backend for a device name: "auto" and "cpu" give the CPU backend; "cuda" throws
/// UsageError (the CUDA search backend is not available in this version); anything else throws
/// UsageError naming the accepted values.
std::unique_ptr<SearchBackend> make_backend(const std::string& device);

}  // namespace novelty
