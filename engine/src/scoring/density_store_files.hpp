// The density store's files, mapped read-only: segments (NVDENS01) and the self-join caches
// (NVSJOIN3) read as lists of every row at their prefix. docs/formats.md, "Density store".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace novelty {

/// A file mapped read-only for as long as this lives (the mapping stays valid after the file is
/// removed or replaced by another process).
class MappedFile {
public:
    /// Maps `path`; false when it cannot be opened or mapped (gone, unreadable).
    bool open(const std::string& path);
    ~MappedFile();
    MappedFile() = default;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    const unsigned char* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Key of one stored list: the paper's row and the prefix [0, prefix) it was searched within.
struct ListKey {
    std::uint32_t row;
    std::uint32_t prefix;
};

/// One mapped file of lists. For a segment, keys (row, prefix) sorted; for a self-join cache, the
/// lists of rows [0, n_lists) at prefix `join_prefix` (keys null).
struct ListFile {
    std::string path;
    std::string label;  ///< the backend that computed the lists
    std::size_t k = 0;
    std::size_t n_lists = 0;
    std::size_t join_prefix = 0;  ///< self-join caches only
    const ListKey* keys = nullptr;
    const std::int32_t* rows = nullptr;
    const float* sims = nullptr;
    MappedFile map;
};

/// Outcome of opening a file of lists.
enum class ListFileStatus { ok, other, damaged };

/// Maps a segment written for `vectors_sha256` and lists of k: other (another format, other
/// vectors, another k, unreadable), damaged (its length or checksum does not match; `why` says
/// which) or ok.
ListFileStatus open_segment(const std::string& path, const std::string& vectors_sha256, std::size_t k, ListFile& file,
                            std::string& why);
/// Maps a self-join cache (NVSJOIN3) of `vectors_sha256`, any q and k; statuses as open_segment.
ListFileStatus open_join_cache(const std::string& path, const std::string& vectors_sha256, ListFile& file,
                               std::string& why);

/// Writes a segment of n lists (keys sorted by row then prefix, each pair once) atomically into
/// `dir` and returns its name, densities-k{k}-{the first 16 hex digits of its SHA-256}.bin.
std::string write_segment(const std::string& dir, const std::string& vectors_sha256, std::size_t k,
                          const std::string& label, const ListKey* keys, const std::int32_t* rows, const float* sims,
                          std::size_t n);

}  // namespace novelty
