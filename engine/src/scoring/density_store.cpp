// DensityStore: the mapped segments and self-join caches of one corpus, lookups over them, and
// appends (one atomic segment each) with compaction.
#include "novelty/scoring/density_store.hpp"

#include "novelty/util/error.hpp"
#include "scoring/density_store_files.hpp"
#include "search/search_rules.hpp"
#include "util/file_util.hpp"
#include "util/kill_point.hpp"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sys/file.h>
#include <unistd.h>
#include <unordered_map>

namespace novelty {

namespace fs = std::filesystem;

bool serve_from_list(const std::int32_t* rows, const float* sims, std::size_t k, std::size_t prefix,
                     std::size_t cutoff, const std::vector<std::int64_t>& excluded_sorted, std::size_t need,
                     std::vector<float>& out) {
    if (prefix < cutoff) return false;
    out.clear();
    if (need == 0) return true;
    for (std::size_t r = 0; r < k; ++r) {
        const std::int32_t row = rows[r];
        if (row < 0) break;  // padding: the list holds every row of its prefix
        if (static_cast<std::size_t>(row) >= cutoff) continue;
        if (std::binary_search(excluded_sorted.begin(), excluded_sorted.end(), static_cast<std::int64_t>(row))) continue;
        out.push_back(sims[r]);
        if (out.size() == need) return true;
    }
    return false;
}

namespace {

/// A list held in memory (a store that cannot be written).
struct MemoryList {
    std::size_t prefix;
    std::vector<std::int32_t> rows;
    std::vector<float> sims;
    std::string label;
};

bool is_join_cache_name(const std::string& name) {
    return name.rfind("selfjoin-", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0;
}

/// An exclusive, non-blocking lock on a file beside the segments, for one compaction at a time.
class CompactionLock {
public:
    explicit CompactionLock(const std::string& path) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~CompactionLock() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool held() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

}  // namespace

struct DensityStore::Impl {
    fs::path cache_dir;
    std::string vectors_sha256;
    std::size_t k = 0;
    bool writable = true;
    Warning warn;
    std::map<std::string, std::unique_ptr<ListFile>> files;  ///< by file name
    std::set<std::string> refused;                          ///< damaged or of other vectors: not mapped
    std::unordered_multimap<std::size_t, MemoryList> memory;
    bool warned_unwritable = false;

    static std::string prefix_name(std::size_t k) { return "densities-k" + std::to_string(k) + "-"; }
    /// The k of a segment's name "densities-k{k}-{16 hex}.bin", or 0 when it is not one.
    static std::size_t segment_k(const std::string& name) {
        unsigned long long k = 0;
        char id[17] = {};
        int end = 0;
        if (std::sscanf(name.c_str(), "densities-k%llu-%16[0-9a-f].bin%n", &k, id, &end) != 2) return 0;
        if (static_cast<std::size_t>(end) != name.size() || std::strlen(id) != 16) return 0;
        return static_cast<std::size_t>(k);
    }
    static bool is_segment_name(const std::string& name) { return segment_k(name) > 0; }
    void say(const std::string& message) const {
        if (warn) warn(message);
    }
    void open_file(const std::string& name);
    void keep_in_memory(const DensityLists& lists, const std::string& label);
};

void DensityStore::Impl::open_file(const std::string& name) {
    auto file = std::make_unique<ListFile>();
    std::string why;
    const std::string path = (cache_dir / name).string();
    const ListFileStatus status = is_segment_name(name) ? open_segment(path, vectors_sha256, segment_k(name), *file, why)
                                                        : open_join_cache(path, vectors_sha256, *file, why);
    if (status == ListFileStatus::ok) {
        files.emplace(name, std::move(file));
        refused.erase(name);  // rewritten whole under the same name (segments are named by their contents)
        return;
    }
    refused.insert(name);
    if (status == ListFileStatus::damaged)
        say(path + ": the stored neighbour densities are damaged (" + why +
            "); they are not used, and the densities they held are computed again");
}

void DensityStore::Impl::keep_in_memory(const DensityLists& lists, const std::string& label) {
    constexpr std::size_t max_memory_lists = std::size_t(1) << 20;  // bounds a long-running server's memory
    if (memory.size() + lists.rows.size() > max_memory_lists) memory.clear();
    for (std::size_t i = 0; i < lists.rows.size(); ++i) {
        MemoryList list{lists.prefixes[i],
                        {lists.neighbours.begin() + static_cast<std::ptrdiff_t>(i * lists.k),
                         lists.neighbours.begin() + static_cast<std::ptrdiff_t>((i + 1) * lists.k)},
                        {lists.sims.begin() + static_cast<std::ptrdiff_t>(i * lists.k),
                         lists.sims.begin() + static_cast<std::ptrdiff_t>((i + 1) * lists.k)},
                        label};
        memory.emplace(lists.rows[i], std::move(list));
    }
}

DensityStore::DensityStore(const Corpus& corpus, std::size_t k, bool writable, Warning warn)
    : impl_(std::make_unique<Impl>()) {
    if (k == 0) throw UsageError("density store: k must be at least 1");
    impl_->cache_dir = fs::path(corpus.dir()) / "cache";
    impl_->vectors_sha256 = corpus.manifest().vectors_sha256;
    impl_->k = k;
    impl_->writable = writable;
    impl_->warn = std::move(warn);
    refresh();
}

DensityStore::~DensityStore() = default;

void DensityStore::refresh() {
    Impl& s = *impl_;
    std::set<std::string> present;
    std::error_code ec;
    for (fs::directory_iterator it(s.cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (s.is_segment_name(name) || is_join_cache_name(name)) present.insert(name);
    }
    for (auto it = s.files.begin(); it != s.files.end();)
        it = present.count(it->first) ? std::next(it) : s.files.erase(it);
    for (const std::string& name : present)
        if (!s.files.count(name) && !s.refused.count(name)) s.open_file(name);
}

bool DensityStore::serve(std::size_t row, std::size_t cutoff, const std::vector<std::int64_t>& excluded_sorted,
                         std::size_t need, std::vector<float>& sims, std::string* label) const {
    const Impl& s = *impl_;
    const auto served = [&](const std::string& by) {
        if (label) *label = by;
        return true;
    };
    for (const auto& [name, file] : s.files) {
        if (!file->keys) {
            if (row < file->n_lists &&
                serve_from_list(file->rows + row * file->k, file->sims + row * file->k, file->k, file->join_prefix,
                                cutoff, excluded_sorted, need, sims))
                return served(file->label);
            continue;
        }
        const ListKey* end = file->keys + file->n_lists;
        const ListKey* at = std::lower_bound(file->keys, end, row, [](const ListKey& key, std::size_t r) {
            return key.row < r;
        });
        for (; at != end && at->row == row; ++at) {
            const std::size_t i = static_cast<std::size_t>(at - file->keys);
            if (serve_from_list(file->rows + i * file->k, file->sims + i * file->k, file->k, at->prefix, cutoff,
                                excluded_sorted, need, sims))
                return served(file->label);
        }
    }
    const auto [first, last] = s.memory.equal_range(row);
    for (auto it = first; it != last; ++it)
        if (serve_from_list(it->second.rows.data(), it->second.sims.data(), it->second.rows.size(), it->second.prefix,
                            cutoff, excluded_sorted, need, sims))
            return served(it->second.label);
    return false;
}

DensityStoreStats DensityStore::stats() const {
    DensityStoreStats out;
    for (const auto& [name, file] : impl_->files) {
        if (file->keys) {
            ++out.segments;
            out.lists += file->n_lists;
            out.bytes += file->map.size();
        } else {
            ++out.join_files;
        }
    }
    out.lists += impl_->memory.size();
    return out;
}

void DensityStore::append(const DensityLists& lists, const std::string& computed_by) {
    Impl& s = *impl_;
    const std::size_t n = lists.rows.size(), k = lists.k;
    if (n == 0) return;
    if (k == 0 || lists.prefixes.size() != n || lists.neighbours.size() != n * k || lists.sims.size() != n * k)
        throw UsageError("density store: " + std::to_string(n) + " lists whose arrays do not hold k = " +
                         std::to_string(k) + " neighbours each");
    if (!s.writable) return s.keep_in_memory(lists, computed_by);
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::make_pair(lists.rows[a], lists.prefixes[a]) < std::make_pair(lists.rows[b], lists.prefixes[b]);
    });
    std::vector<ListKey> keys;
    std::vector<std::int32_t> rows;
    std::vector<float> sims;
    for (std::size_t i : order) {
        if (!keys.empty() && keys.back().row == lists.rows[i] && keys.back().prefix == lists.prefixes[i]) continue;
        keys.push_back({lists.rows[i], lists.prefixes[i]});
        rows.insert(rows.end(), lists.neighbours.begin() + static_cast<std::ptrdiff_t>(i * k),
                    lists.neighbours.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
        sims.insert(sims.end(), lists.sims.begin() + static_cast<std::ptrdiff_t>(i * k),
                    lists.sims.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
    }
    std::string name;
    try {
        fs::create_directories(s.cache_dir);
        remove_stale_temp_files(s.cache_dir.string());  // segments a killed process left half-written
        name = write_segment(s.cache_dir.string(), s.vectors_sha256, k, computed_by, keys.data(), rows.data(),
                             sims.data(), keys.size());
    } catch (const std::exception& e) {
        if (!s.warned_unwritable)
            s.say(std::string("the neighbour densities could not be cached (") + e.what() +
                  "); they are kept for this run and computed again next time");
        s.warned_unwritable = true;
        return s.keep_in_memory(lists, computed_by);
    }
    if (!s.files.count(name)) s.open_file(name);
    if (stats().segments > max_segments) compact();
}

namespace {

/// One list of a mapped segment, for compaction.
struct ListRef {
    ListKey key;
    const ListFile* file;
    std::size_t index;
    std::size_t real() const {
        std::size_t n = 0;
        while (n < file->k && file->rows[index * file->k + n] >= 0) ++n;
        return n;
    }
    std::size_t below(std::size_t prefix) const {
        std::size_t n = 0;
        for (std::size_t r = 0; r < file->k && file->rows[index * file->k + r] >= 0; ++r)
            n += static_cast<std::size_t>(file->rows[index * file->k + r]) < prefix ? 1 : 0;
        return n;
    }
};

/// One row's lists, longest prefix first: each prefix once, none that a kept longer list holds
/// whole (its entries below the shorter prefix are then the shorter list), at most `limit`.
std::vector<ListRef> kept_lists(std::vector<ListRef> lists, std::size_t limit) {
    std::sort(lists.begin(), lists.end(), [](const ListRef& a, const ListRef& b) { return a.key.prefix > b.key.prefix; });
    std::vector<ListRef> kept;
    for (const ListRef& list : lists) {
        if (kept.size() == limit) break;
        bool held = false;
        for (const ListRef& longer : kept)
            held = held || longer.key.prefix == list.key.prefix || longer.below(list.key.prefix) >= list.real();
        if (!held) kept.push_back(list);
    }
    std::reverse(kept.begin(), kept.end());  // prefixes ascending, as a segment's keys
    return kept;
}


/// Merges the segments of one k (their lists in `all`) into one new segment; returns its name.
std::string merge_lists(const fs::path& cache_dir, const std::string& vectors_sha256, std::size_t k, std::vector<ListRef>& all,
                 std::size_t limit) {
    std::stable_sort(all.begin(), all.end(), [](const ListRef& a, const ListRef& b) { return a.key.row < b.key.row; });
    std::vector<ListKey> keys;
    std::vector<std::int32_t> rows;
    std::vector<float> sims;
    std::string label;
    for (std::size_t begin = 0; begin < all.size();) {
        std::size_t end = begin;
        while (end < all.size() && all[end].key.row == all[begin].key.row) ++end;
        for (const ListRef& list : kept_lists({all.begin() + static_cast<std::ptrdiff_t>(begin),
                                               all.begin() + static_cast<std::ptrdiff_t>(end)},
                                              limit)) {
            keys.push_back(list.key);
            const std::size_t at = list.index * k;
            rows.insert(rows.end(), list.file->rows + at, list.file->rows + at + k);
            sims.insert(sims.end(), list.file->sims + at, list.file->sims + at + k);
            if (label.empty()) label = list.file->label;
        }
        begin = end;
    }
    return write_segment(cache_dir.string(), vectors_sha256, k, label, keys.data(), rows.data(), sims.data(),
                         keys.size());
}

}  // namespace

void DensityStore::compact() {
    Impl& s = *impl_;
    if (!s.writable) return;
    CompactionLock lock((s.cache_dir / "densities.lock").string());
    if (!lock.held()) return;  // another process is compacting
    refresh();
    std::map<std::size_t, std::vector<ListRef>> by_k;
    std::vector<std::string> merged;
    for (const auto& [name, file] : s.files) {
        if (!file->keys) continue;
        merged.push_back(name);
        for (std::size_t i = 0; i < file->n_lists; ++i) by_k[file->k].push_back({file->keys[i], file.get(), i});
    }
    std::set<std::string> written;
    for (auto& [k, all] : by_k) written.insert(merge_lists(s.cache_dir, s.vectors_sha256, k, all, max_lists_per_row));
    // A kill from here on leaves the merged segment beside some of the ones it merged: both hold
    // the same lists, so either serves them.
    kill_point("densities:merged");
    std::error_code ec;
    for (const std::string& old : merged) {
        if (!written.count(old)) fs::remove(s.cache_dir / old, ec);
        kill_point("densities:removed");
    }
    for (const std::string& old : s.refused)
        if (Impl::is_segment_name(old)) fs::remove(s.cache_dir / old, ec);  // damaged or of other vectors: never used
    fsync_path(s.cache_dir.string());
    refresh();
}

}  // namespace novelty
