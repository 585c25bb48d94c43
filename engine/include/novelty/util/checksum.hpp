// SHA-256 checksums of files and strings, as lowercase hex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace novelty {

/// SHA-256 of the whole file at `path`, streamed; throws Error when it cannot be read.
std::string sha256_file(const std::string& path);
/// A cheap identity of a large file: its size and the SHA-256 of a sample of it (the whole file
/// up to 1 MiB; beyond that 256 blocks of 4 KiB spread evenly, the first and the last included).
/// It tells one file from another (other vectors, another import) by reading about 1 MiB; a
/// flipped byte outside the sample is found only by sha256_file.
struct FileFingerprint {
    std::uint64_t bytes = 0;
    std::string sample_sha256;
    bool operator==(const FileFingerprint&) const = default;
};
/// The fingerprint of the file at `path`; throws Error when it cannot be read.
FileFingerprint file_fingerprint(const std::string& path);

/// SHA-256 computed piece by piece (a stream read once, such as a pipe).
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const void* data, std::size_t n_bytes);
    /// The digest of everything given so far, as 64 lowercase hex digits. Call once.
    std::string hex();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace novelty
