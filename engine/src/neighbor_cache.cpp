// Self-join cache files: a fixed header, then int32 neighbour rows, float32 similarities and
// float32 densities, little-endian.
//   magic "NVSJOIN2" | vectors sha256 (64 ASCII hex) | n_rows u64 | q u64 | k_stored u64
//   | computed_by (16 bytes: the backend's label, NUL-padded)
// Files with magic "NVSJOIN1" (no computed_by) are still read; their computed_by is empty.
//   rows   int32[n_rows * k_stored]   (-1 = none)
//   sims   float[n_rows * k_stored]
//   density float[n_rows]
#include "file_util.hpp"
#include "novelty/error.hpp"
#include "novelty/neighbor_cache.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace novelty {

namespace fs = std::filesystem;

namespace {

constexpr char magic_v1[8] = {'N', 'V', 'S', 'J', 'O', 'I', 'N', '1'};
constexpr char magic[8] = {'N', 'V', 'S', 'J', 'O', 'I', 'N', '2'};
constexpr std::size_t label_bytes = 16;

struct Header {
    char magic[8];
    char vectors_sha256[64];
    std::uint64_t n_rows;
    std::uint64_t q;
    std::uint64_t k_stored;
};

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

}  // namespace

std::string self_join_cache_path(const Corpus& corpus, std::size_t n_rows, std::size_t q, std::size_t k_stored) {
    return (fs::path(corpus.dir()) / "cache" /
            ("selfjoin-q" + std::to_string(q) + "-k" + std::to_string(k_stored) + "-rows" + std::to_string(n_rows) + ".bin"))
        .string();
}

bool read_self_join(const std::string& path, const std::string& vectors_sha256, std::size_t n_rows, std::size_t q,
                    std::size_t k_stored, SelfJoin& join) {
    File file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) return false;
    Header header{};
    if (std::fread(&header, sizeof header, 1, file.get()) != 1) return false;
    const bool v1 = std::memcmp(header.magic, magic_v1, sizeof magic_v1) == 0;
    if (!v1 && std::memcmp(header.magic, magic, sizeof magic) != 0) return false;
    char label[label_bytes] = {};
    if (!v1 && std::fread(label, 1, label_bytes, file.get()) != label_bytes) return false;
    if (vectors_sha256.size() != 64 || std::memcmp(header.vectors_sha256, vectors_sha256.data(), 64) != 0) return false;
    if (header.n_rows != n_rows || header.q != q || header.k_stored != k_stored) return false;
    const std::size_t n = n_rows * k_stored;
    std::vector<std::int32_t> rows(n);
    join.sims.resize(n);
    join.density.resize(n_rows);
    if (std::fread(rows.data(), sizeof(std::int32_t), n, file.get()) != n) return false;
    if (std::fread(join.sims.data(), sizeof(float), n, file.get()) != n) return false;
    if (std::fread(join.density.data(), sizeof(float), n_rows, file.get()) != n_rows) return false;
    if (std::fgetc(file.get()) != EOF) return false;
    join.rows.assign(rows.begin(), rows.end());
    join.n_rows = n_rows;
    join.q = q;
    join.k_stored = k_stored;
    join.computed_by.assign(label, strnlen(label, label_bytes));
    return true;
}

void write_self_join(const std::string& path, const std::string& vectors_sha256, const SelfJoin& join) {
    if (vectors_sha256.size() != 64) throw Error("self-join cache: the corpus vectors have no checksum");
    fs::create_directories(fs::path(path).parent_path());
    Header header{};
    std::memcpy(header.magic, magic, sizeof magic);
    std::memcpy(header.vectors_sha256, vectors_sha256.data(), 64);
    header.n_rows = join.n_rows;
    header.q = join.q;
    header.k_stored = join.k_stored;
    char label[label_bytes] = {};
    std::memcpy(label, join.computed_by.data(), std::min(join.computed_by.size(), label_bytes));
    AtomicFile file(path);
    file.write(&header, sizeof header);
    file.write(label, label_bytes);
    std::vector<std::int32_t> rows(std::min<std::size_t>(join.rows.size(), 1 << 20));
    for (std::size_t start = 0; start < join.rows.size(); start += rows.size()) {
        const std::size_t n = std::min(rows.size(), join.rows.size() - start);
        for (std::size_t i = 0; i < n; ++i) rows[i] = static_cast<std::int32_t>(join.rows[start + i]);
        file.write(rows.data(), n * sizeof(std::int32_t));
    }
    file.write(join.sims.data(), join.sims.size() * sizeof(float));
    file.write(join.density.data(), join.density.size() * sizeof(float));
    file.commit();
}

SelfJoin cached_self_join(const Corpus& corpus, SearchIndex& index, std::size_t n_rows, std::size_t q,
                          std::size_t k_stored, const ProgressFn& progress, bool* from_cache,
                          const CacheWarning& on_store_failure) {
    const VectorView vectors = VectorView::of(corpus.vectors());
    if (index.corpus().data != vectors.data || index.n_rows() != vectors.n_rows)
        throw UsageError("cached_self_join: the search index was not built on this corpus's vectors");
    if (n_rows > static_cast<std::size_t>(INT32_MAX)) throw UsageError("self-join: more than 2^31 rows");
    const std::string path = self_join_cache_path(corpus, n_rows, q, k_stored);
    const std::string& sha = corpus.manifest().vectors_sha256;
    SelfJoin join;
    if (read_self_join(path, sha, n_rows, q, k_stored, join)) {
        if (from_cache) *from_cache = true;
        return join;
    }
    join = index.self_join(n_rows, q, k_stored, progress);
    try {
        write_self_join(path, sha, join);
    } catch (const std::exception& e) {
        if (!on_store_failure) throw;
        on_store_failure(std::string("the neighbour densities could not be cached (") + e.what() +
                         "); they will be computed again next time");
    }
    if (from_cache) *from_cache = false;
    return join;
}

}  // namespace novelty
