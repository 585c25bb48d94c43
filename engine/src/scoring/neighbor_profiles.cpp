// Neighbour profiles for scoring many variants at once (docs/scoring.md).
#include "scoring/neighbor_profiles.hpp"

#include "novelty/util/error.hpp"
#include "scoring/index_check.hpp"

#include <algorithm>

namespace novelty {

namespace {

std::vector<std::int64_t> sorted_unique(const RowLists& lists, std::size_t item) {
    if (lists.n_items() == 0) return {};
    std::vector<std::int64_t> rows(lists.begin(item), lists.begin(item) + lists.size(item));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

SelfJoin whole_join(const Corpus& corpus, SearchIndex& index, const ProfileOptions& options) {
    const std::size_t n = corpus.size();
    const std::size_t k_stored = std::min(options.k_neighbor + options.extra, n - 1);
    const std::size_t q = std::min(options.k_neighbor, k_stored);
    if (!options.write_cache) {
        SelfJoin join;
        if (!read_self_join(self_join_cache_path(corpus, n, q, k_stored), corpus.manifest().vectors_sha256, n, q,
                            k_stored, join))
            join = index.self_join(n, q, k_stored, options.on_join_progress);
        return join;
    }
    const CacheWarning warn = options.on_cache_warning ? options.on_cache_warning : [](const std::string&) {};
    return cached_self_join(corpus, index, n, q, k_stored, options.on_join_progress, nullptr, warn);
}

/// A neighbour list that the join could not fill: idea i's r-th nearest paper.
struct Pending {
    std::size_t idea = 0, rank = 0;
};

/// Searches the pending lists directly, in one batch, and writes them into the profiles.
void search_pending(const Corpus& corpus, SearchIndex& index, const ScoreInput& input,
                    const std::vector<Pending>& pending, std::vector<NeighborProfile>& profiles, std::size_t k) {
    if (pending.empty()) return;
    const std::size_t dim = corpus.manifest().dim;
    std::vector<float> vectors(pending.size() * dim);
    SearchQueries queries;  // fields by name: the struct may gain fields
    queries.n_queries = pending.size();
    queries.dim = dim;
    for (std::size_t t = 0; t < pending.size(); ++t) {
        const NeighborProfile& profile = profiles[pending[t].idea];
        const std::int64_t row = profile.rows[pending[t].rank];
        corpus.vectors().row_as_f32(static_cast<std::size_t>(row), vectors.data() + t * dim);
        queries.scope.row_limit.push_back(profile.searchable);
        std::vector<std::int64_t> left_out = sorted_unique(input.excluded, pending[t].idea);
        left_out.push_back(row);
        queries.scope.excluded.add(left_out);
    }
    queries.vectors = vectors.data();
    const TopK top = index.search(queries, k);
    for (std::size_t t = 0; t < pending.size(); ++t) {
        if (top.count[t] < k)
            throw UsageError("a neighbour of idea " + std::to_string(pending[t].idea) + " reaches only " +
                             std::to_string(top.count[t]) + " papers within the cutoff and exclusions; " +
                             std::to_string(k) + " are needed");
        NeighborProfile& profile = profiles[pending[t].idea];
        std::copy(top.sims.begin() + t * k, top.sims.begin() + (t + 1) * k,
                  profile.neighbor_sims.begin() + pending[t].rank * k);
    }
}

}  // namespace

std::vector<NeighborProfile> neighbor_profiles(const Corpus& corpus, SearchIndex& index, const ScoreInput& input,
                                               const ProfileOptions& options, ProfileStats* stats) {
    const std::size_t n = input.n_ideas, k = options.k_idea, p = options.p, kn = options.k_neighbor;
    if (k < 1 || kn < 1) throw UsageError("profiles need k_idea >= 1 and k_neighbor >= 1");
    if (p > k) throw UsageError("profiles: p = " + std::to_string(p) + " exceeds k_idea = " + std::to_string(k));
    if (std::max(k, kn) > SearchIndex::max_k)
        throw UsageError("profiles: sizes must be at most " + std::to_string(SearchIndex::max_k));
    if (corpus.size() < 2) throw UsageError("profiles need a corpus of at least 2 papers");
    require_index_on_corpus(index, corpus, "profiles");
    SearchQueries queries;
    queries.vectors = input.vectors;
    queries.n_queries = n;
    queries.dim = input.dim;
    queries.scope.row_limit = input.row_limit;
    queries.scope.excluded = input.excluded;
    queries.scope.filters = input.filters;  // as the scorer: an idea's neighbours among the papers its filter allows
    if (queries.scope.row_limit.empty()) queries.scope.row_limit.assign(n, corpus.size());
    const TopK top = index.search(queries, k);

    std::vector<NeighborProfile> profiles(n);
    std::vector<Pending> pending;
    ProfileStats counted;
    const SelfJoin join = p > 0 ? whole_join(corpus, index, options) : SelfJoin{};
    for (std::size_t i = 0; i < n; ++i) {
        NeighborProfile& profile = profiles[i];
        profile.searchable = std::min(queries.scope.row_limit[i], corpus.size());
        if (top.count[i] < k)
            throw UsageError("idea " + std::to_string(i) + " reaches only " + std::to_string(top.count[i]) +
                             " papers within its cutoff, exclusions and filter; " + std::to_string(k) + " are needed");
        profile.rows.assign(top.rows.begin() + i * k, top.rows.begin() + (i + 1) * k);
        profile.sims.assign(top.sims.begin() + i * k, top.sims.begin() + (i + 1) * k);
        profile.k_neighbor = kn;
        profile.neighbor_sims.assign(p * kn, 0.0f);
        const std::vector<std::int64_t> excluded = sorted_unique(input.excluded, i);
        for (std::size_t r = 0; r < p; ++r) {
            const std::size_t row = static_cast<std::size_t>(profile.rows[r]);
            std::size_t taken = 0;
            for (std::size_t s = 0; s < join.k_stored && taken < kn; ++s) {
                const std::int64_t other = join.rows[row * join.k_stored + s];
                if (other < 0) break;
                if (static_cast<std::size_t>(other) >= profile.searchable) continue;
                if (std::binary_search(excluded.begin(), excluded.end(), other)) continue;
                profile.neighbor_sims[r * kn + taken++] = join.sims[row * join.k_stored + s];
            }
            if (taken < kn) pending.push_back({i, r});
            else ++counted.from_join;
        }
    }
    counted.searched = pending.size();
    search_pending(corpus, index, input, pending, profiles, kn);
    if (stats) *stats = counted;
    return profiles;
}

}  // namespace novelty
