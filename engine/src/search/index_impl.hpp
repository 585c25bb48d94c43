// The backend table (novelty/search/search.hpp, namespace detail): what every search backend
// implements behind the public SearchIndex and SearchBackend. SearchIndex's public methods check
// the arguments, normalise the queries and pass them here with the index's tuning of the moment;
// an implementation only computes. Internal to the engine, as ggml keeps its backend interface
// in an internal header; implementations: search/cpu/ (f32 and bf16), search/cuda/, shard/mpi/.
#pragma once

#include "novelty/search/search.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace novelty {

/// Throws UsageError unless `corpus` can be searched: non-empty, dim > 0, data, float32 or
/// float16, at most 2^31 - 1 rows. Called before a backend loads the rows.
void check_search_corpus(const VectorView& corpus);

namespace detail {

/// One index's implementation, over rows the caller keeps alive.
class IndexImpl {
public:
    virtual ~IndexImpl() = default;
    virtual std::string name() const = 0;
    virtual std::string label() const { return name(); }
    /// Queries checked and unit-norm (SearchIndex::search's contract); 1 <= k <= max_k.
    virtual TopK search(const SearchQueries& queries, std::size_t k, const SearchTuning& tuning) = 0;
    /// 1 <= q <= k_stored <= max_k; 1 <= n_rows <= the index's rows.
    virtual SelfJoin self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const SearchTuning& tuning,
                               const ProgressFn& progress) = 0;
    /// Queries as in search(); one candidate list per query, every row inside the index.
    virtual TopK search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k,
                                   const SearchTuning& tuning) = 0;
};

/// One backend's implementation: its options, and the indexes it builds.
class BackendImpl {
public:
    virtual ~BackendImpl() = default;
    virtual std::string name() const = 0;
    virtual std::string label() const { return name(); }
    /// An index over `corpus` (already checked by check_search_corpus), built with `tuning`.
    virtual std::unique_ptr<IndexImpl> build(const VectorView& corpus, const SearchTuning& tuning) const = 0;
};

}  // namespace detail
}  // namespace novelty
