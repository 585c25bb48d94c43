// update_density_store: the density store's lists carried over a corpus add (renumbered, offered
// the new rows within their prefix), so that the lists new papers cannot change are kept and the
// rest are exact again.
#include "novelty/scoring/density_store.hpp"

#include "scoring/density_store_files.hpp"
#include "scoring/sorted_list.hpp"
#include "search/exact_rescore.hpp"
#include "util/parallel_for.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

namespace novelty {

namespace fs = std::filesystem;

namespace {

/// One list in the new numbering.
struct CarriedList {
    ListKey key{};
    std::vector<std::int32_t> rows;
    std::vector<float> sims;
    std::size_t offered = 0;
};

/// The map between the two numberings and where each old prefix ends in the new one.
struct Renumbering {
    std::vector<std::int64_t> new_of_old;       ///< -1: removed
    std::vector<std::size_t> kept_prefix;       ///< [L]: the new prefix holding the kept old rows < L
    std::vector<std::size_t> new_rows;          ///< rows added (or replaced), ascending
    std::size_t old_rows = 0, n_rows = 0;

    Renumbering(const std::vector<std::int64_t>& old_row_of_new, std::size_t old_n)
        : new_of_old(old_n, -1), kept_prefix(old_n + 1, 0), old_rows(old_n), n_rows(old_row_of_new.size()) {
        for (std::size_t r = 0; r < n_rows; ++r) {
            if (old_row_of_new[r] < 0) new_rows.push_back(r);
            else new_of_old[static_cast<std::size_t>(old_row_of_new[r])] = static_cast<std::int64_t>(r);
        }
        for (std::size_t l = 1; l <= old_n; ++l)
            kept_prefix[l] = new_of_old[l - 1] >= 0 ? static_cast<std::size_t>(new_of_old[l - 1]) + 1 : kept_prefix[l - 1];
    }
    /// A list of the whole old corpus covers the whole new one.
    std::size_t new_prefix(std::size_t prefix) const { return prefix >= old_rows ? n_rows : kept_prefix[prefix]; }
};

std::optional<CarriedList> carry(const ListFile& file, std::size_t i, const Renumbering& map, const VectorView& vectors) {
    const ListKey old = file.keys[i];
    if (old.row >= map.old_rows || old.prefix > map.old_rows || map.new_of_old[old.row] < 0) return std::nullopt;
    CarriedList out;
    out.key = {static_cast<std::uint32_t>(map.new_of_old[old.row]), static_cast<std::uint32_t>(map.new_prefix(old.prefix))};
    out.rows.assign(file.rows + i * file.k, file.rows + (i + 1) * file.k);
    out.sims.assign(file.sims + i * file.k, file.sims + (i + 1) * file.k);
    for (std::int32_t& row : out.rows) {
        if (row < 0) break;
        if (static_cast<std::size_t>(row) >= map.old_rows || map.new_of_old[static_cast<std::size_t>(row)] < 0)
            return std::nullopt;  // a stored neighbour is gone: what came after the list is unknown
        row = static_cast<std::int32_t>(map.new_of_old[static_cast<std::size_t>(row)]);
    }
    std::vector<float> own_buffer, other_buffer;
    const float* own = row_as_f32(vectors, out.key.row, own_buffer);
    const auto end = std::lower_bound(map.new_rows.begin(), map.new_rows.end(), static_cast<std::size_t>(out.key.prefix));
    for (auto it = map.new_rows.begin(); it != end; ++it) {
        const float sim = exact_dot(own, row_as_f32(vectors, *it, other_buffer), vectors.dim);
        insert_sorted(out.rows.data(), out.sims.data(), file.k, sim, static_cast<std::int64_t>(*it));
        ++out.offered;
    }
    return out;
}

/// Writes one k's carried lists as a segment: sorted by key, each key once.
std::string write_carried(const fs::path& dir, const std::string& sha, std::size_t k, std::vector<CarriedList>& lists) {
    std::sort(lists.begin(), lists.end(), [](const CarriedList& a, const CarriedList& b) {
        return std::make_pair(a.key.row, a.key.prefix) < std::make_pair(b.key.row, b.key.prefix);
    });
    std::vector<ListKey> keys;
    std::vector<std::int32_t> rows;
    std::vector<float> sims;
    for (const CarriedList& list : lists) {
        if (!keys.empty() && keys.back().row == list.key.row && keys.back().prefix == list.key.prefix) continue;
        keys.push_back(list.key);
        rows.insert(rows.end(), list.rows.begin(), list.rows.end());
        sims.insert(sims.end(), list.sims.begin(), list.sims.end());
    }
    fs::create_directories(dir);
    return write_segment(dir.string(), sha, k, "cpu", keys.data(), rows.data(), sims.data(), keys.size());
}

}  // namespace

DensityStoreUpdate update_density_store(const std::string& old_cache_dir, const std::string& old_vectors_sha256,
                                        std::size_t old_rows, const std::string& new_cache_dir,
                                        const std::string& new_vectors_sha256,
                                        const std::vector<std::int64_t>& old_row_of_new, const VectorView& vectors) {
    DensityStoreUpdate update;
    const Renumbering map(old_row_of_new, old_rows);
    std::map<std::size_t, std::vector<CarriedList>> by_k;
    std::error_code ec;
    for (fs::directory_iterator it(old_cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        unsigned long long k = 0;
        char id[17] = {};
        if (std::sscanf(name.c_str(), "densities-k%llu-%16[0-9a-f].bin", &k, id) != 2 || k == 0) continue;
        ListFile file;
        std::string why;
        if (open_segment(it->path().string(), old_vectors_sha256, k, file, why) != ListFileStatus::ok) continue;
        if (file.label != "cpu") {  // offering new rows with the CPU's exact_dot keeps only the CPU's lists exact
            update.dropped += file.n_lists;
            continue;
        }
        std::vector<std::optional<CarriedList>> carried(file.n_lists);
        parallel_for_blocks((file.n_lists + 255) / 256, 0, [&](std::size_t block) {
            for (std::size_t i = block * 256; i < std::min(file.n_lists, (block + 1) * 256); ++i)
                carried[i] = carry(file, i, map, vectors);
        });
        for (auto& list : carried) {
            if (!list) {
                ++update.dropped;
                continue;
            }
            ++update.kept;
            update.offered += list->offered;
            by_k[file.k].push_back(std::move(*list));
        }
    }
    for (auto& [k, lists] : by_k) update.files.push_back(write_carried(new_cache_dir, new_vectors_sha256, k, lists));
    return update;
}

}  // namespace novelty
