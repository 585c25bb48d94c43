// Segment files of the density store (NVDENS01), little-endian:
//   magic "NVDENS01" | vectors sha256 (64 ASCII hex) | k u64 | n_lists u64
//   | computed_by (16 bytes: the backend's label, NUL-padded)
//   keys  n_lists x {row u32, prefix u32}, sorted by row then prefix, each pair once
//   rows  int32[n_lists * k]   (-1 = none)
//   sims  float[n_lists * k]   (-inf for padding)
//   sha256 (64 ASCII hex) of all the bytes above
// and the self-join caches (NVSJOIN3, neighbor_cache.cpp) mapped in place as lists.
#include "scoring/density_store_files.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <utility>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace novelty {

namespace {

constexpr char segment_magic[8] = {'N', 'V', 'D', 'E', 'N', 'S', '0', '1'};
constexpr char join_magic[8] = {'N', 'V', 'S', 'J', 'O', 'I', 'N', '3'};
constexpr std::size_t label_bytes = 16;
constexpr std::size_t sha_bytes = 64;

struct SegmentHeader {
    char magic[8];
    char vectors_sha256[64];
    std::uint64_t k;
    std::uint64_t n_lists;
    char label[label_bytes];
};
static_assert(sizeof(SegmentHeader) == 104);

struct JoinHeader {
    char magic[8];
    char vectors_sha256[64];
    std::uint64_t n_rows;
    std::uint64_t q;
    std::uint64_t k_stored;
    char label[label_bytes];
};
static_assert(sizeof(JoinHeader) == 112);

bool checksum_matches(const MappedFile& map) {
    if (map.size() < sha_bytes) return false;
    const std::size_t body = map.size() - sha_bytes;
    Sha256 digest;
    constexpr std::size_t piece = std::size_t(1) << 24;
    for (std::size_t at = 0; at < body; at += piece) digest.update(map.data() + at, std::min(piece, body - at));
    return digest.hex() == std::string(reinterpret_cast<const char*>(map.data()) + body, sha_bytes);
}

std::string label_of(const char* label) { return std::string(label, strnlen(label, label_bytes)); }

}  // namespace

bool MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
        ::close(fd);
        return false;
    }
    void* map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return false;
    data_ = static_cast<const unsigned char*>(map);
    size_ = static_cast<std::size_t>(st.st_size);
    return true;
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

ListFileStatus open_segment(const std::string& path, const std::string& vectors_sha256, std::size_t k, ListFile& file,
                            std::string& why) {
    if (!file.map.open(path) || file.map.size() < sizeof(SegmentHeader)) return ListFileStatus::other;
    SegmentHeader header{};
    std::memcpy(&header, file.map.data(), sizeof header);
    if (std::memcmp(header.magic, segment_magic, sizeof segment_magic) != 0) return ListFileStatus::other;
    if (vectors_sha256.size() != sha_bytes || std::memcmp(header.vectors_sha256, vectors_sha256.data(), sha_bytes) != 0)
        return ListFileStatus::other;
    if (header.k != k || k == 0) return ListFileStatus::other;
    const std::uint64_t n = header.n_lists;
    const std::uint64_t expected = sizeof header + n * sizeof(ListKey) + n * k * 8 + sha_bytes;
    if (n > (std::uint64_t(1) << 40) / (k + 1) || file.map.size() != expected) {
        why = std::to_string(file.map.size()) + " bytes where " + std::to_string(expected) + " were written";
        return ListFileStatus::damaged;
    }
    if (!checksum_matches(file.map)) {
        why = "its checksum does not match its contents";
        return ListFileStatus::damaged;
    }
    file.path = path;
    file.label = label_of(header.label);
    file.k = k;
    file.n_lists = n;
    const unsigned char* at = file.map.data() + sizeof header;
    file.keys = reinterpret_cast<const ListKey*>(at);
    file.rows = reinterpret_cast<const std::int32_t*>(at + n * sizeof(ListKey));
    file.sims = reinterpret_cast<const float*>(at + n * sizeof(ListKey) + n * k * 4);
    return ListFileStatus::ok;
}

ListFileStatus open_join_cache(const std::string& path, const std::string& vectors_sha256, ListFile& file,
                               std::string& why) {
    if (!file.map.open(path) || file.map.size() < sizeof(JoinHeader)) return ListFileStatus::other;
    JoinHeader header{};
    std::memcpy(&header, file.map.data(), sizeof header);
    if (std::memcmp(header.magic, join_magic, sizeof join_magic) != 0) return ListFileStatus::other;
    if (vectors_sha256.size() != sha_bytes || std::memcmp(header.vectors_sha256, vectors_sha256.data(), sha_bytes) != 0)
        return ListFileStatus::other;
    const std::uint64_t n = header.n_rows, k = header.k_stored;
    if (k == 0 || n == 0 || n > (std::uint64_t(1) << 40) / (k + 1)) return ListFileStatus::other;
    const std::uint64_t expected = sizeof header + n * k * 8 + n * 4 + sha_bytes;
    if (file.map.size() != expected) {
        why = std::to_string(file.map.size()) + " bytes where " + std::to_string(expected) + " were written";
        return ListFileStatus::damaged;
    }
    if (!checksum_matches(file.map)) {
        why = "its checksum does not match its contents";
        return ListFileStatus::damaged;
    }
    file.path = path;
    file.label = label_of(header.label);
    file.k = k;
    file.n_lists = n;
    file.join_prefix = n;
    file.rows = reinterpret_cast<const std::int32_t*>(file.map.data() + sizeof header);
    file.sims = reinterpret_cast<const float*>(file.map.data() + sizeof header + n * k * 4);
    return ListFileStatus::ok;
}

std::string write_segment(const std::string& dir, const std::string& vectors_sha256, std::size_t k,
                          const std::string& label, const ListKey* keys, const std::int32_t* rows, const float* sims,
                          std::size_t n) {
    if (vectors_sha256.size() != sha_bytes) throw Error("density store: the corpus vectors have no checksum");
    SegmentHeader header{};
    std::memcpy(header.magic, segment_magic, sizeof segment_magic);
    std::memcpy(header.vectors_sha256, vectors_sha256.data(), sha_bytes);
    header.k = k;
    header.n_lists = n;
    std::memcpy(header.label, label.data(), std::min(label.size(), label_bytes));
    const std::pair<const void*, std::size_t> parts[] = {
        {&header, sizeof header}, {keys, n * sizeof(ListKey)}, {rows, n * k * sizeof(std::int32_t)},
        {sims, n * k * sizeof(float)}};
    Sha256 digest;
    for (const auto& [data, bytes] : parts) digest.update(data, bytes);
    const std::string sum = digest.hex();
    // Named by its contents: the same lists get the same name in every run and process.
    const std::string name = "densities-k" + std::to_string(k) + "-" + sum.substr(0, 16) + ".bin";
    AtomicFile file(dir + "/" + name);
    for (const auto& [data, bytes] : parts) file.write(data, bytes);
    file.write(sum.data(), sum.size());
    file.commit();
    return name;
}

}  // namespace novelty
