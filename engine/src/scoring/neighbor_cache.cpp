// Self-join cache files: a fixed header, then int32 neighbour rows, float32 similarities and
// float32 densities, little-endian, then a checksum of everything before it.
//   magic "NVSJOIN3" | vectors sha256 (64 ASCII hex) | n_rows u64 | q u64 | k_stored u64
//   | computed_by (16 bytes: the backend's label, NUL-padded)
//   rows   int32[n_rows * k_stored]   (-1 = none)
//   sims   float[n_rows * k_stored]
//   density float[n_rows]
//   sha256 (64 ASCII hex) of all the bytes above
// Files of the earlier formats ("NVSJOIN1", "NVSJOIN2") carry no checksum: they are not used,
// and the join is computed again and stored in the current format.
#include "util/file_util.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"
#include "scoring/index_check.hpp"
#include "novelty/scoring/neighbor_cache.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace novelty {

namespace fs = std::filesystem;

namespace {

constexpr char magic[8] = {'N', 'V', 'S', 'J', 'O', 'I', 'N', '3'};
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
    char label[label_bytes] = {};
    if (std::fread(&header, sizeof header, 1, file.get()) != 1) return false;
    if (std::memcmp(header.magic, magic, sizeof magic) != 0) return false;  // another format: not checked, not used
    if (vectors_sha256.size() != 64 || std::memcmp(header.vectors_sha256, vectors_sha256.data(), 64) != 0) return false;
    if (header.n_rows != n_rows || header.q != q || header.k_stored != k_stored) return false;
    // This is the cache for these vectors and parameters: from here on, anything amiss is damage.
    const auto damaged = [&](const std::string& what) {
        return CorpusError(path + ": the cached neighbour densities are damaged (" + what +
                           "); run 'novelty index' on the corpus with the same --q and --cutoff to compute them again");
    };
    const std::size_t n = n_rows * k_stored;
    const std::uint64_t expected_bytes = sizeof header + label_bytes + n * (sizeof(std::int32_t) + sizeof(float)) +
                                         n_rows * sizeof(float) + 64;
    std::error_code ec;
    const std::uint64_t bytes = fs::file_size(path, ec);
    if (ec || bytes != expected_bytes)
        throw damaged(std::to_string(bytes) + " bytes where " + std::to_string(expected_bytes) + " were written");
    Sha256 digest;
    digest.update(&header, sizeof header);
    const auto read = [&](void* data, std::size_t size, std::size_t count) {
        if (std::fread(data, size, count, file.get()) != count) throw damaged("read error");
        digest.update(data, size * count);
    };
    read(label, 1, label_bytes);
    std::vector<std::int32_t> rows(n);
    join.sims.resize(n);
    join.density.resize(n_rows);
    read(rows.data(), sizeof(std::int32_t), n);
    read(join.sims.data(), sizeof(float), n);
    read(join.density.data(), sizeof(float), n_rows);
    char stored[64];
    if (std::fread(stored, 1, sizeof stored, file.get()) != sizeof stored) throw damaged("no checksum");
    if (digest.hex() != std::string(stored, sizeof stored)) throw damaged("its checksum does not match its contents");
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
    remove_stale_temp_files(fs::path(path).parent_path().string());
    Header header{};
    std::memcpy(header.magic, magic, sizeof magic);
    std::memcpy(header.vectors_sha256, vectors_sha256.data(), 64);
    header.n_rows = join.n_rows;
    header.q = join.q;
    header.k_stored = join.k_stored;
    char label[label_bytes] = {};
    std::memcpy(label, join.computed_by.data(), std::min(join.computed_by.size(), label_bytes));
    AtomicFile file(path);
    Sha256 digest;
    const auto write = [&](const void* data, std::size_t n_bytes) {
        digest.update(data, n_bytes);
        file.write(data, n_bytes);
    };
    write(&header, sizeof header);
    write(label, label_bytes);
    std::vector<std::int32_t> rows(std::min<std::size_t>(join.rows.size(), 1 << 20));
    for (std::size_t start = 0; start < join.rows.size(); start += rows.size()) {
        const std::size_t n = std::min(rows.size(), join.rows.size() - start);
        for (std::size_t i = 0; i < n; ++i) rows[i] = static_cast<std::int32_t>(join.rows[start + i]);
        write(rows.data(), n * sizeof(std::int32_t));
    }
    write(join.sims.data(), join.sims.size() * sizeof(float));
    write(join.density.data(), join.density.size() * sizeof(float));
    const std::string sum = digest.hex();
    file.write(sum.data(), sum.size());
    file.commit();
}

SelfJoin cached_self_join(const Corpus& corpus, SearchIndex& index, std::size_t n_rows, std::size_t q,
                          std::size_t k_stored, const ProgressFn& progress, bool* from_cache,
                          const CacheWarning& on_store_failure) {
    require_index_on_corpus(index, corpus, "cached_self_join");
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

std::optional<std::string> remove_damaged_self_join(const Corpus& corpus, std::size_t n_rows, std::size_t q,
                                                    std::size_t k_stored) {
    const std::string path = self_join_cache_path(corpus, n_rows, q, k_stored);
    SelfJoin unused;
    try {
        read_self_join(path, corpus.manifest().vectors_sha256, n_rows, q, k_stored, unused);
        return std::nullopt;
    } catch (const CorpusError& e) {
        std::error_code ec;
        fs::remove(path, ec);
        if (ec) throw CorpusError(path + ": the damaged cache could not be removed (" + ec.message() + ")");
        return std::string(e.what());
    }
}

}  // namespace novelty
