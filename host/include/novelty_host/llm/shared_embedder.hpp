// One encoder used by several parts of a process (the server's embed batcher and its claims
// jobs): each part gets its own Embedder view, and the views take turns on the one model.
#pragma once

#include "novelty/encoder/embedder.hpp"

#include <functional>
#include <memory>

namespace novelty::host {

/// Takes ownership of `embedder` and returns a maker of views: each call returns an Embedder that
/// forwards to it, one call at a time across all views (a mutex). The model lives while any view
/// or the maker does. `embedder` must not be null.
std::function<std::unique_ptr<Embedder>()> share_embedder(std::unique_ptr<Embedder> embedder);

}  // namespace novelty::host
