#include "novelty/checksum.hpp"

#include "novelty/error.hpp"

#include <openssl/evp.h>

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

Sha256::Sha256() : ctx_(new DigestContext()) {}

Sha256::~Sha256() { delete static_cast<DigestContext*>(ctx_); }

void Sha256::update(const void* data, std::size_t n) { static_cast<DigestContext*>(ctx_)->update(data, n); }

std::string Sha256::hex() { return static_cast<DigestContext*>(ctx_)->hex(); }

std::string sha256_hex(std::string_view bytes) {
    DigestContext digest;
    digest.update(bytes.data(), bytes.size());
    return digest.hex();
}

}  // namespace novelty
