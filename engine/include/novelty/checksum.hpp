// SHA-256 checksums of files and strings, as lowercase hex.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace novelty {

/// SHA-256 of the whole file at `path`, streamed; throws Error when it cannot be read.
std::string sha256_file(const std::string& path);
/// SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

/// SHA-256 of bytes given piece by piece (a stream read once, such as a pipe).
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const void* data, std::size_t n);
    /// The digest of everything given so far, as lowercase hex; call once.
    std::string hex();

private:
    void* ctx_;  // EVP_MD_CTX
};

}  // namespace novelty
