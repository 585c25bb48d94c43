// Self-joins cached in the corpus directory (cache/), keyed by q, the neighbours kept per row,
// and the row prefix; a cache made from other vectors is ignored and replaced.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/search.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace novelty {

/// Extra neighbours kept per row beyond q, so that leaving a few papers out of a neighbour's
/// list (exclusions) still leaves q exact neighbours without recomputing the join.
inline constexpr std::size_t default_extra_neighbors = 8;

/// Path of the cache file for these parameters: DIR/cache/selfjoin-q{q}-k{k_stored}-rows{n_rows}.bin
std::string self_join_cache_path(const Corpus& corpus, std::size_t n_rows, std::size_t q, std::size_t k_stored);

/// Called with a message when a computed self-join cannot be stored (a read-only corpus).
using CacheWarning = std::function<void(const std::string& message)>;

/// The self-join of corpus rows [0, n_rows): loaded from the cache when a valid one exists
/// (same vectors checksum and parameters, checksum verified), otherwise computed with `index`
/// (built on this corpus's vectors; UsageError otherwise) and stored (written atomically). A
/// damaged cache file throws CorpusError (read_self_join). `from_cache` tells which happened.
/// When storing fails, the join is still
/// returned if `on_store_failure` is given (it gets the reason); without it the failure throws.
/// Throws CorpusError when the corpus has no vectors.
SelfJoin cached_self_join(const Corpus& corpus, SearchIndex& index, std::size_t n_rows, std::size_t q,
                          std::size_t k_stored, const ProgressFn& progress = {}, bool* from_cache = nullptr,
                          const CacheWarning& on_store_failure = {});

/// Repairs the cache of these parameters before a cached_self_join that should compute it again
/// rather than refuse it (`novelty index`): when the file is the cache for this corpus's vectors
/// and these parameters but damaged (read_self_join throws CorpusError), it is removed and the
/// problem returned, for a note. Returns nullopt and leaves the file alone when it is missing,
/// valid, or of other vectors, parameters or an earlier format (cached_self_join replaces those).
/// Reads the whole file to verify its checksum.
std::optional<std::string> remove_damaged_self_join(const Corpus& corpus, std::size_t n_rows, std::size_t q,
                                                    std::size_t k_stored);

/// Reads a cache file; returns false when it is missing, of an earlier format (without a
/// checksum), from other vectors (`vectors_sha256`) or for other parameters. Throws CorpusError
/// naming the file when it is the cache for these vectors and parameters but damaged: a length
/// other than the one written, or contents that do not match its SHA-256.
bool read_self_join(const std::string& path, const std::string& vectors_sha256, std::size_t n_rows, std::size_t q,
                    std::size_t k_stored, SelfJoin& join);
/// Writes a cache file atomically, with join.computed_by (its first 16 bytes) and a SHA-256 of
/// its contents.
void write_self_join(const std::string& path, const std::string& vectors_sha256, const SelfJoin& join);

}  // namespace novelty
