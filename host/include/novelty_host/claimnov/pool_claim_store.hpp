// Pool claims extracted once and kept: a SQLite file (by default CORPUS/cache/claims.sqlite)
// holding each pool paper's claims per extractor ("offline-approx" or "llm:<model>") and the
// vectors of embedded claim texts per embedder, so reruns extract and embed nothing twice.
#pragma once

#include "novelty/claimnov/claimnov.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host {

class PoolClaimStore {
public:
    /// Opens or creates the store at `path`; ":memory:" keeps it in memory. Throws Error naming
    /// the file when it cannot be opened for writing.
    explicit PoolClaimStore(const std::string& path);
    ~PoolClaimStore();
    PoolClaimStore(const PoolClaimStore&) = delete;
    PoolClaimStore& operator=(const PoolClaimStore&) = delete;

    const std::string& path() const;
    /// The claims stored for a paper by `extractor`, in extraction order; nothing when the paper
    /// was never extracted (an empty list means it was, and yielded none). Each paper's claims
    /// and each vector carry a SHA-256: an entry that does not match it is damaged and treated
    /// as absent (so it is computed again and replaced), with one warning on stderr per store.
    /// Entries stored before checksums existed have none and are used as they are.
    std::optional<std::vector<Claim>> claims(const std::string& extractor, const std::string& paper_id);
    /// Stores one paper's claims (replacing earlier ones), committed at once.
    void put_claims(const std::string& extractor, const std::string& paper_id, const std::vector<Claim>& claims);
    /// A stored vector of `text` by `embedder` (dim floats), if any (and not damaged).
    std::optional<std::vector<float>> vector(const std::string& embedder, const std::string& text);
    /// Stores vectors: texts.size() x dim floats, row i for texts[i], in one transaction.
    void put_vectors(const std::string& embedder, const std::vector<std::string>& texts, const std::vector<float>& rows,
                     std::size_t dim);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty::host
