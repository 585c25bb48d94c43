// Exact cosine search: the backend interface, implemented on the CPU (the reference) and with
// CUDA. Vectors are L2-normalised, so cosine similarity is a dot product.
#pragma once

#include "novelty/io/npy.hpp"
#include "novelty/util/progress.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace novelty {

/// A read-only row-major matrix of n_rows x dim elements, float32 or float16 (not owned).
struct VectorView {
    const void* data = nullptr;
    DType dtype = DType::f32;
    std::size_t n_rows = 0;
    std::size_t dim = 0;

    static VectorView of(const NpyMatrix& matrix) {
        return VectorView{matrix.data(), matrix.dtype(), matrix.rows(), matrix.cols()};
    }
    static VectorView of(const std::vector<float>& values, std::size_t dim) {
        return VectorView{values.data(), DType::f32, dim == 0 ? 0 : values.size() / dim, dim};
    }
};

/// Rows as compressed sparse rows: the rows of item i are rows[offsets[i] .. offsets[i+1]).
/// An empty `offsets` means no rows for any item.
struct RowLists {
    std::vector<std::size_t> offsets;
    std::vector<std::int64_t> rows;

    std::size_t n_items() const { return offsets.empty() ? 0 : offsets.size() - 1; }
    std::size_t size(std::size_t item) const { return offsets.empty() ? 0 : offsets[item + 1] - offsets[item]; }
    const std::int64_t* begin(std::size_t item) const { return rows.data() + offsets[item]; }
    /// Appends one item's rows.
    void add(const std::vector<std::int64_t>& item_rows);
};

/// A set of corpus rows as a bitmask (a metadata filter: a field, a venue, a citation floor, a
/// list of papers): bit r % 64 of words[r / 64] set = row r may be found. Rows at or past
/// n_rows are never allowed.
struct RowFilter {
    std::size_t n_rows = 0;
    std::vector<std::uint64_t> words;  ///< (n_rows + 63) / 64 words; bits past n_rows are 0

    /// A filter over n_rows rows allowing none of them.
    static RowFilter none(std::size_t n_rows) { return RowFilter{n_rows, std::vector<std::uint64_t>((n_rows + 63) / 64, 0)}; }
    void allow(std::size_t row) { words[row / 64] |= std::uint64_t(1) << (row % 64); }
    void deny(std::size_t row) { words[row / 64] &= ~(std::uint64_t(1) << (row % 64)); }
    bool allows(std::int64_t row) const {
        return row >= 0 && static_cast<std::size_t>(row) < n_rows &&
               ((words[static_cast<std::size_t>(row) / 64] >> (static_cast<std::size_t>(row) % 64)) & 1u) != 0;
    }
    /// Rows allowed.
    std::size_t count() const;
};

/// Which corpus rows each query may find: one object that every backend receives whole and
/// applies in one place (the CPU tile loop and candidate scoring, the CUDA mask upload, the MPI
/// shard mapping), as faiss passes one SearchParameters with its IDSelector. For n queries:
/// - rows [row_begin[i], row_limit[i]) only: an empty row_begin means 0 for every query, an empty
///   row_limit the whole corpus (a date cutoff is a limit; a split date's contemporary window is
///   a begin); limits above the corpus size mean the whole corpus; a begin at or past its limit
///   leaves nothing;
/// - never the rows of excluded (e.g. the query's own paper; empty = none, else one list per
///   query, in any order, duplicates allowed);
/// - only rows a metadata filter allows: no filters, one for every query, or one per query
///   (null = none for that query), each over the index's rows;
/// - never itself, when the queries are corpus rows: with first_self_row >= 0, query i is corpus
///   row first_self_row + i and is left out of its own results (a self-join); -1 = the queries
///   are not corpus rows.
/// Row ranges, exclusions and self-exclusion apply within the filter.
struct SearchScope {
    std::vector<std::size_t> row_begin;
    std::vector<std::size_t> row_limit;
    RowLists excluded;
    std::vector<std::shared_ptr<const RowFilter>> filters;
    std::int64_t first_self_row = -1;

    /// Query i's filter, or null.
    const RowFilter* filter(std::size_t i) const {
        if (filters.empty()) return nullptr;
        return filters.size() == 1 ? filters[0].get() : filters[i].get();
    }
};

/// What to search for: n_queries float32 query vectors (normalised by the index) and the rows
/// each may find.
struct SearchQueries {
    /// n_queries x dim, row-major float32. A query with NaN/Inf or a zero norm is refused.
    const float* vectors = nullptr;
    std::size_t n_queries = 0;
    std::size_t dim = 0;
    /// The rows each query may find (row ranges, exclusions, filters, self-exclusion).
    SearchScope scope;
    /// true: the vectors are already finite and unit-norm (queries an index has normalised, or
    /// corpus rows) and are used exactly as given; false (the default): the index checks and
    /// normalises them. A sharded index passes queries it has normalised once to every shard
    /// with this set, so that each shard sees the very bits one process would.
    bool unit_norm = false;
};

/// Top-k results: n_queries x k, row-major. Query i's neighbours are
/// rows[i*k .. i*k + count[i]), by similarity descending, ties by lower row; the slots after
/// count[i] hold row -1 and similarity -inf (fewer searchable rows than k).
struct TopK {
    std::size_t n_queries = 0;
    std::size_t k = 0;
    std::vector<std::int64_t> rows;
    std::vector<float> sims;
    std::vector<std::size_t> count;

    std::int64_t row(std::size_t query, std::size_t rank) const { return rows[query * k + rank]; }
    float sim(std::size_t query, std::size_t rank) const { return sims[query * k + rank]; }
};

/// Each corpus row's q nearest other rows within a prefix, and its neighbour density.
struct SelfJoin {
    std::size_t n_rows = 0;      ///< the prefix: rows [0, n_rows) were joined among themselves
    std::size_t q = 0;           ///< neighbours used for the density
    std::size_t k_stored = 0;    ///< neighbours kept per row (>= q: a few extra keep exclusions exact)
    /// n_rows x k_stored: neighbours of each row, itself excluded, similarity descending, ties
    /// by lower row; -1 / -inf padding when the prefix has fewer than k_stored other rows.
    std::vector<std::int64_t> rows;
    std::vector<float> sims;
    /// Per row: mean cosine distance (1 - sim) to its q nearest other rows; NaN when the prefix
    /// has fewer than q other rows.
    std::vector<float> density;
    /// The label() of the backend that computed it (cpu, cuda-f16, ...); empty when unknown (a
    /// cache file written before labels were recorded).
    std::string computed_by;
};


/// Tuning that does not change results (tests use small tiles to cross tile boundaries).
struct SearchTuning {
    std::size_t query_tile = 0;   ///< queries per tile; 0 = the backend's choice
    std::size_t corpus_tile = 0;  ///< corpus rows per tile; 0 = the backend's choice
    std::size_t threads = 0;      ///< 0 = all hardware threads
    /// Memory the CPU self-join may spend on per-row collectors (about 8 bytes x 4 x k_stored per row)
    /// to multiply each block pair once; above it, it searches block by block. 0 = 1 GiB.
    std::size_t self_join_memory = 0;
};

/// The largest k any search accepts.
inline constexpr std::size_t max_search_k = 2048;

namespace detail {
/// The backend table behind every index and backend: each backend (CPU, CPU bf16, CUDA, MPI
/// shards) implements these in engine/src/search/index_impl.hpp, an internal header, as ggml
/// keeps its backend interface internal. A library user never names them: SearchBackend::build
/// and make_sharded_index make indexes.
class IndexImpl;
class BackendImpl;
}  // namespace detail

/// A corpus loaded once into a backend and searched many times (as faiss's Index and cuVS's
/// brute_force index): the CPU index reads the caller's rows in place; the CUDA index keeps
/// them resident on the device (or streams them in chunks when they do not fit). Build one
/// with SearchBackend::build(). The rows are the caller's and must outlive the index.
///
/// Public methods check shapes and arguments (throwing UsageError), normalise the queries and
/// then call the backend's implementation. An index serves one call at a time: the CUDA index
/// keeps its work buffers, resident rows and profile between calls, so callers on several
/// threads share it under a lock (as `novelty serve` does) or build one index each.
class SearchIndex final {
public:
    /// Checks the corpus (non-empty, dim > 0, data, float32 or float16, at most 2^31 - 1 rows;
    /// UsageError) and takes a backend's implementation over it; made by SearchBackend::build
    /// and make_sharded_index.
    SearchIndex(const VectorView& corpus, std::unique_ptr<detail::IndexImpl> impl);
    ~SearchIndex();
    SearchIndex(const SearchIndex&) = delete;
    SearchIndex& operator=(const SearchIndex&) = delete;

    /// "cpu" or "cuda".
    std::string name() const;
    /// What provenance records: the name plus whatever arithmetic choice can change results
    /// (the CUDA index's storage: cuda-f16, cuda-bf16, cuda-f32; the CPU's bf16 screening:
    /// cpu-bf16); the name by default.
    std::string label() const;
    /// The corpus rows this index was built on (n_rows x dim).
    const VectorView& corpus() const { return corpus_; }
    std::size_t n_rows() const { return corpus_.n_rows; }
    std::size_t dim() const { return corpus_.dim; }

    /// Top-k by cosine similarity for each query among the rows its scope allows
    /// (queries.scope). k must be 1..max_k; when a query has fewer than k searchable rows, all
    /// of them are returned (count[i] < k). Neighbours by similarity descending, ties by lower
    /// row.
    TopK search(const SearchQueries& queries, std::size_t k);

    /// The self-join of rows [0, n_rows): each row's k_stored nearest other rows and its
    /// density over the nearest q. Requires 1 <= q <= k_stored <= max_k.
    SelfJoin self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const ProgressFn& progress = {});

    /// Top-k of each query among its own candidate rows (candidates.n_items() == n_queries);
    /// duplicates in a list count once. The scope applies as in search().
    TopK search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k);

    static constexpr std::size_t max_k = max_search_k;

    /// Read by every call (tests set small tiles to cross tile boundaries).
    SearchTuning tuning;

private:
    VectorView corpus_;
    std::unique_ptr<detail::IndexImpl> impl_;
};

/// A device and its options: it builds search indexes. make_backend() chooses one.
class SearchBackend final {
public:
    /// Takes a backend's implementation; made by make_cpu_backend, make_cuda_backend, make_backend.
    explicit SearchBackend(std::unique_ptr<detail::BackendImpl> impl);
    ~SearchBackend();
    SearchBackend(const SearchBackend&) = delete;
    SearchBackend& operator=(const SearchBackend&) = delete;

    std::string name() const;
    /// The label() of the indexes it builds.
    std::string label() const;

    /// Loads `corpus` into a new index (for CUDA: a device copy, made on its first search and
    /// kept for every later one). The index gets this backend's tuning.
    std::unique_ptr<SearchIndex> build(const VectorView& corpus) const;

    static constexpr std::size_t max_k = max_search_k;

    SearchTuning tuning;

private:
    std::unique_ptr<detail::BackendImpl> impl_;
};

/// The CPU backend: OpenBLAS sgemm over tiles, threshold-filtered heaps, all cores.
std::unique_ptr<SearchBackend> make_cpu_backend();

}  // namespace novelty
