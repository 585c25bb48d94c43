#include "novelty/util/checksum.hpp"

#include "novelty/util/error.hpp"

#include <openssl/evp.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace novelty {

namespace {

struct DigestContext {
    EVP_MD_CTX* ctx;
    DigestContext() : ctx(EVP_MD_CTX_new()) {
        if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1)
            throw Error("SHA-256: cannot initialise the digest");
    }
    ~DigestContext() { EVP_MD_CTX_free(ctx); }
    void update(const void* data, std::size_t n) {
        if (EVP_DigestUpdate(ctx, data, n) != 1) throw Error("SHA-256: digest update failed");
    }
    std::string hex() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (EVP_DigestFinal_ex(ctx, digest, &len) != 1) throw Error("SHA-256: digest failed");
        static const char* digits = "0123456789abcdef";
        std::string out;
        for (unsigned int i = 0; i < len; ++i) {
            out += digits[digest[i] >> 4];
            out += digits[digest[i] & 15];
        }
        return out;
    }
};

}  // namespace

std::string sha256_file(const std::string& path) {
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw Error(path + ": cannot open for checksum: " + std::strerror(errno));
    DigestContext digest;
    std::vector<char> buffer(1 << 20);
    std::size_t n;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) digest.update(buffer.data(), n);
    if (std::ferror(file.get())) throw Error(path + ": read error while computing its checksum");
    return digest.hex();
}

FileFingerprint file_fingerprint(const std::string& path) {
    constexpr std::uint64_t whole_limit = 1 << 20, block = 4096, n_blocks = 256;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path + ": cannot open for its fingerprint: " + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw Error(path + ": cannot stat: " + std::strerror(errno));
    FileFingerprint out;
    out.bytes = static_cast<std::uint64_t>(st.st_size);
    DigestContext digest;
    std::vector<char> buffer(out.bytes <= whole_limit ? out.bytes : block);
    auto read_at = [&](std::uint64_t offset, std::size_t n) {
        std::size_t got = 0;
        while (got < n) {
            const ssize_t r = ::pread(fd, buffer.data() + got, n - got, static_cast<off_t>(offset + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) throw Error(path + ": read error while computing its fingerprint");
            got += static_cast<std::size_t>(r);
        }
        digest.update(buffer.data(), n);
    };
    if (out.bytes <= whole_limit) {
        if (out.bytes > 0) read_at(0, out.bytes);
    } else {
        const std::uint64_t last = out.bytes - block;
        for (std::uint64_t i = 0; i < n_blocks; ++i) read_at(last * i / (n_blocks - 1), block);
    }
    out.sample_sha256 = digest.hex();
    return out;
}

struct Sha256::Impl {
    DigestContext digest;
};
Sha256::Sha256() : impl_(std::make_unique<Impl>()) {}
Sha256::~Sha256() = default;
void Sha256::update(const void* data, std::size_t n_bytes) { impl_->digest.update(data, n_bytes); }
std::string Sha256::hex() { return impl_->digest.hex(); }

std::string sha256_hex(std::string_view bytes) {
    DigestContext digest;
    digest.update(bytes.data(), bytes.size());
    return digest.hex();
}

}  // namespace novelty
