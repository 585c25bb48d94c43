// The --device, --device-storage and --device-memory flags shared by the commands that search
// (search, index, score), and the backend they select.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/search/search.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace novelty::cli {

/// --device, --device-storage, --device-memory and --storage: the engine's backend choice.
using DeviceFlags = BackendChoice;

/// Registers the four flags on `command`.
void add_device_flags(CLI::App* command, DeviceFlags& flags);

/// The backend the flags ask for, with `threads` CPU workers (0 = all cores). Says on stderr
/// which backend it is unless `quiet`. Throws UsageError for cuda without CUDA or a device.
std::unique_ptr<SearchBackend> make_search_backend(const DeviceFlags& flags, std::size_t threads, bool quiet);

/// The index a command searches `corpus` with: built by `backend` in one process; under an MPI
/// launcher with several ranks, a sharded index over every rank (novelty/shard/shard.hpp), each
/// rank's shard on the device the flags ask for (the GPU of its local rank), with the
/// backend's tuning.
std::unique_ptr<SearchIndex> make_index(const Corpus& corpus, const SearchBackend& backend, const DeviceFlags& flags);

}  // namespace novelty::cli
