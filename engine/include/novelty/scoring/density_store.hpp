// The density store: per corpus paper, its nearest other rows and their similarities within the
// row prefixes computed so far, shared by every run on the corpus (docs/formats.md, "Density
// store"). `novelty score` reads a neighbour's density from any stored list that serves it and
// computes, in one batched search, only the lists it lacks; `novelty index` fills it for every
// row (its self-join caches are read as lists of every row at their prefix).
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace novelty {

/// New lists to store: for list i, paper rows[i]'s k nearest other rows within [0, prefixes[i]),
/// similarity descending, ties by lower row (best_of's rule), -1 / -inf padding when the prefix
/// holds fewer than k other rows.
struct DensityLists {
    std::size_t k = 0;
    std::vector<std::uint32_t> rows;
    std::vector<std::uint32_t> prefixes;
    std::vector<std::int32_t> neighbours;  ///< rows.size() x k
    std::vector<float> sims;               ///< rows.size() x k
};

/// The need similarities of a paper's nearest other rows within [0, cutoff), less the rows in
/// excluded_sorted, read from one stored list of that paper (`k` entries within [0, prefix),
/// nearest first): true when prefix >= cutoff and at least `need` of its rows lie below the cutoff
/// and outside the exclusions. The list then holds the exact answer: every row of [0, cutoff)
/// it lacks ranks after all of its entries. `sims` gets the first need such similarities.
bool serve_from_list(const std::int32_t* rows, const float* sims, std::size_t k, std::size_t prefix,
                     std::size_t cutoff, const std::vector<std::int64_t>& excluded_sorted, std::size_t need,
                     std::vector<float>& out);

/// What a store holds (for reports and benchmarks).
struct DensityStoreStats {
    std::size_t segments = 0;     ///< segment files mapped
    std::size_t join_files = 0;   ///< self-join caches mapped (every row at their prefix)
    std::size_t lists = 0;        ///< lists in the segments (memory lists included)
    std::uint64_t bytes = 0;      ///< bytes of the segment files
};

/// The store of one corpus for lists of k neighbours: segment files
/// DIR/cache/densities-k{k}-{id}.bin (each written atomically, never changed; a reader maps the
/// complete ones it finds) and the self-join caches DIR/cache/selfjoin-q*-k*-rows*.bin of the
/// corpus's vectors. A segment or cache that is damaged (length or checksum) is left out with a
/// warning; its lists are computed again. Not thread-safe: one per Scorer.
class DensityStore {
public:
    using Warning = std::function<void(const std::string& message)>;
    /// `writable` false: appended lists are kept in memory only (a read-only corpus, the server).
    DensityStore(const Corpus& corpus, std::size_t k, bool writable, Warning warn = {});
    ~DensityStore();
    DensityStore(const DensityStore&) = delete;
    DensityStore& operator=(const DensityStore&) = delete;

    /// Maps the segments and caches that appeared since the last refresh (another process's
    /// appends), and unmaps those gone.
    void refresh();
    /// serve_from_list over every stored list of `row`; `label` (may be null) gets the backend
    /// label of the list that served.
    bool serve(std::size_t row, std::size_t cutoff, const std::vector<std::int64_t>& excluded_sorted, std::size_t need,
               std::vector<float>& sims, std::string* label) const;
    /// Stores the lists (computed by the backend `computed_by`) as one new segment, written
    /// atomically; then, when more than max_segments segments exist, merges them into one
    /// (compact). A store that cannot be written keeps them in memory and warns once.
    void append(const DensityLists& lists, const std::string& computed_by);
    /// Merges every segment of these vectors into one: each (row, prefix) once, a list dropped when
    /// a longer prefix's list of the same row holds it whole, at most max_lists_per_row lists per
    /// row (the longest prefixes kept). Segments of other vectors are removed. Skipped while
    /// another process compacts.
    void compact();
    DensityStoreStats stats() const;

    /// Segments beyond which append() compacts.
    static constexpr std::size_t max_segments = 8;
    /// Lists kept per paper by compact(): the store's size is bounded by
    /// N x max_lists_per_row x (8 + 8 k) bytes plus max_segments appended segments.
    static constexpr std::size_t max_lists_per_row = 4;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// What carrying a density store over a corpus add did.
struct DensityStoreUpdate {
    std::vector<std::string> files;  ///< segment files written into the new cache folder
    std::size_t kept = 0;            ///< lists carried over
    std::size_t dropped = 0;         ///< lists dropped (their paper or a stored neighbour removed, another backend's)
    std::size_t offered = 0;         ///< new rows offered to kept lists, summed over the lists
};

/// The density store of a corpus before an add (segments in old_cache_dir for old_vectors_sha256,
/// old_rows rows) carried to the corpus after it (`vectors`, its rows; old_row_of_new as for
/// update_self_join): a list whose paper and stored neighbours all remain is renumbered; its
/// prefix becomes the new prefix holding the same old rows (the whole new corpus for a list of
/// the whole old corpus), and each new row inside that prefix is offered to it (exact_dot, the
/// CPU backend's similarity), so that it is the list a search of the new corpus gives. Lists of
/// another backend than the CPU, of removed papers, or that held a removed neighbour are dropped
/// (computed again on demand). Writes one segment per k into new_cache_dir (created) for
/// new_vectors_sha256. Damaged segments are skipped.
DensityStoreUpdate update_density_store(const std::string& old_cache_dir, const std::string& old_vectors_sha256,
                                        std::size_t old_rows, const std::string& new_cache_dir,
                                        const std::string& new_vectors_sha256,
                                        const std::vector<std::int64_t>& old_row_of_new, const VectorView& vectors);

}  // namespace novelty
