// Near-duplicate clustering over a search backend (novelty/scoring/dedup.hpp, docs/dedup.md).
//
// Exactness. The clusters are the connected components of the graph G of pairs with similarity
// >= t. The first pass is the backend's self-join keeping K neighbours per idea: an idea whose
// K-th neighbour is below t (or that sees every other idea) has all its edges in its list, and
// is "resolved". Every edge with a resolved end is therefore known, so only edges between two
// unresolved ideas can be missing. Each later round gathers the unresolved ideas, ordered by
// their current component, and searches each against the unresolved ideas of the OTHER
// components (two prefix searches: components in order, then in reverse order, so a
// component's own rows are never searchable and never crowd the top-k). An idea whose two
// searches end below t is resolved (its edges to every other component are now known; later
// merges only grow components). An idea still saturated found K ideas of other components at or
// above t and merges with them, so each round reduces the number of unresolved components and
// the rounds end. K doubles each round.
#include "novelty/corpus/vectors.hpp"
#include "novelty/scoring/dedup.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <utility>

namespace novelty {

namespace {

constexpr std::size_t queries_per_search = 4096;

class DisjointSets {
public:
    explicit DisjointSets(std::size_t n) : parent_(n), size_(n, 1) { std::iota(parent_.begin(), parent_.end(), 0); }
    std::size_t find(std::size_t x) {
        while (parent_[x] != x) {
            parent_[x] = parent_[parent_[x]];
            x = parent_[x];
        }
        return x;
    }
    void unite(std::size_t a, std::size_t b) {
        a = find(a);
        b = find(b);
        if (a == b) return;
        if (size_[a] < size_[b]) std::swap(a, b);
        parent_[b] = a;
        size_[a] += size_[b];
    }

private:
    std::vector<std::size_t> parent_;
    std::vector<std::size_t> size_;
};

// The active ideas, L2-normalised (norm summed in double), as a compact m x dim matrix; `index`
// maps a compact row to its idea.
std::vector<float> normalised_active(const float* vectors, std::size_t n, std::size_t dim,
                                     const std::vector<char>& active, std::vector<std::size_t>& index) {
    std::vector<float> out;
    for (std::size_t i = 0; i < n; ++i) {
        if (!active.empty() && !active[i]) continue;
        const float* v = vectors + i * dim;
        if (const RowProblem problem = row_problem(v, dim); problem != RowProblem::none)
            throw UsageError("idea " + std::to_string(i) + " " + row_problem_text(problem));
        double sum = 0;
        for (std::size_t c = 0; c < dim; ++c) sum += double(v[c]) * v[c];
        const double inv = 1.0 / std::sqrt(sum);
        for (std::size_t c = 0; c < dim; ++c) out.push_back(static_cast<float>(v[c] * inv));
        index.push_back(i);
    }
    return out;
}

bool saturated(const TopK& top, std::size_t q, float threshold) {
    return top.count[q] == top.k && top.sim(q, top.k - 1) >= threshold;
}

// The first pass: the self-join with k neighbours each. Links every pair it sees at or above
// the threshold; returns the unresolved rows (k or more neighbours at or above it).
std::vector<std::size_t> first_pass(SearchBackend& backend, const std::vector<float>& x, std::size_t m,
                                    std::size_t dim, std::size_t k, const DedupOptions& options, DisjointSets& sets) {
    const std::unique_ptr<SearchIndex> index = backend.build(VectorView::of(x, dim));
    const SelfJoin join = index->self_join(m, 1, k, options.progress);
    std::vector<std::size_t> unresolved;
    for (std::size_t i = 0; i < m; ++i) {
        std::size_t r = 0;
        for (; r < k; ++r) {
            const std::int64_t row = join.rows[i * k + r];
            if (row < 0 || join.sims[i * k + r] < options.threshold) break;
            sets.unite(i, static_cast<std::size_t>(row));
        }
        if (r == k && k < m - 1) unresolved.push_back(i);
    }
    return unresolved;
}

// Searches the rows `order` (compact rows, grouped by component) each against the rows before
// its component's first position (`limit`), k at a time; links pairs at or above the threshold
// and marks queries whose searches were saturated in `still`.
void search_prefixes(SearchBackend& backend, const std::vector<float>& x, std::size_t dim,
                     const std::vector<std::size_t>& order, const std::vector<std::size_t>& limit, std::size_t k,
                     float threshold, DisjointSets& sets, std::vector<char>& still) {
    std::vector<float> gathered(order.size() * dim);
    for (std::size_t p = 0; p < order.size(); ++p)
        std::copy(x.begin() + order[p] * dim, x.begin() + (order[p] + 1) * dim, gathered.begin() + p * dim);
    const std::unique_ptr<SearchIndex> index = backend.build(VectorView::of(gathered, dim));
    for (std::size_t begin = 0; begin < order.size(); begin += queries_per_search) {
        const std::size_t end = std::min(order.size(), begin + queries_per_search);
        SearchQueries queries;
        queries.vectors = gathered.data() + begin * dim;
        queries.n_queries = end - begin;
        queries.dim = dim;
        queries.scope.row_limit.assign(limit.begin() + begin, limit.begin() + end);
        const TopK top = index->search(queries, k);
        for (std::size_t q = 0; q < end - begin; ++q) {
            for (std::size_t r = 0; r < top.count[q] && top.sim(q, r) >= threshold; ++r)
                sets.unite(order[begin + q], order[static_cast<std::size_t>(top.row(q, r))]);
            if (saturated(top, q, threshold)) still[begin + q] = 1;
        }
    }
}

// One later round over the unresolved rows; returns those still unresolved.
std::vector<std::size_t> next_round(SearchBackend& backend, const std::vector<float>& x, std::size_t dim,
                                    const std::vector<std::size_t>& unresolved, std::size_t k, float threshold,
                                    DisjointSets& sets) {
    // Component blocks: rows sorted by (root, row).
    std::vector<std::pair<std::size_t, std::size_t>> keyed;
    for (std::size_t row : unresolved) keyed.emplace_back(sets.find(row), row);
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::size_t> block_start;  // per position: where its block starts
    for (std::size_t p = 0; p < keyed.size(); ++p)
        block_start.push_back(p > 0 && keyed[p].first == keyed[p - 1].first ? block_start[p - 1] : p);
    const std::size_t n = keyed.size();
    // One component left: there is nothing for it to link to.
    if (keyed.front().first == keyed.back().first) return {};
    std::vector<char> forward_still(n, 0), backward_still(n, 0);
    std::vector<std::size_t> order(n), limit(n);
    for (std::size_t p = 0; p < n; ++p) {
        order[p] = keyed[p].second;
        limit[p] = block_start[p];
    }
    search_prefixes(backend, x, dim, order, limit, k, threshold, sets, forward_still);
    // Blocks in reverse order, each block's rows in their order: position p moves to
    // n - block_end + (p - block_start), and its prefix is every row of the later blocks.
    std::vector<std::size_t> back_order(n), back_limit(n), back_of(n);
    for (std::size_t p = 0; p < n;) {
        std::size_t end = p;
        while (end < n && block_start[end] == p) ++end;
        for (std::size_t j = p; j < end; ++j) {
            const std::size_t moved = n - end + (j - p);
            back_order[moved] = keyed[j].second;
            back_limit[moved] = n - end;
            back_of[moved] = j;
        }
        p = end;
    }
    std::vector<char> moved_still(n, 0);
    search_prefixes(backend, x, dim, back_order, back_limit, k, threshold, sets, moved_still);
    for (std::size_t p = 0; p < n; ++p)
        if (moved_still[p]) backward_still[back_of[p]] = 1;
    std::vector<std::size_t> still;
    for (std::size_t p = 0; p < n; ++p)
        if (forward_still[p] || backward_still[p]) still.push_back(keyed[p].second);
    std::sort(still.begin(), still.end());
    return still;
}

double dot(const float* a, const float* b, std::size_t dim) {
    double sum = 0;
    for (std::size_t c = 0; c < dim; ++c) sum += double(a[c]) * b[c];
    return sum;
}

// Means closer than this are a tie (the earlier member wins): the float32 vectors of two copies
// of one text can differ in their last bits, and the two means of a pair, equal in exact
// arithmetic, are computed in different orders; neither should pick the representative.
constexpr double central_tie_tolerance = 1e-6;

// Mean similarities, representatives and similarities to them, cluster by cluster. The mean of
// member i is (x_i . s - x_i . x_i) / (size - 1) with s the sum of the cluster's vectors, so the
// work is linear in the members.
void summarise(const std::vector<float>& x, std::size_t dim, const std::vector<std::size_t>& index,
               const DedupOptions& options, DedupResult& result) {
    const std::size_t n_clusters = result.representative.size();
    std::vector<std::size_t> offsets(n_clusters + 1, 0), members(result.n_ideas);
    for (std::size_t i = 0; i < result.n_ideas; ++i) ++offsets[result.cluster[i] + 1];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    std::vector<std::size_t> fill(offsets.begin(), offsets.end() - 1);
    for (std::size_t i = 0; i < result.n_ideas; ++i) members[fill[result.cluster[i]]++] = i;  // ascending
    std::vector<std::size_t> compact_of(result.n_ideas, 0);
    for (std::size_t r = 0; r < index.size(); ++r) compact_of[index[r]] = r;
    std::vector<double> sum(dim);
    result.mean_sim.assign(result.n_ideas, std::numeric_limits<double>::quiet_NaN());
    result.sim_to_representative.assign(result.n_ideas, 1.0f);
    result.cluster_size.assign(n_clusters, 0);
    for (std::size_t c = 0; c < n_clusters; ++c) {
        const std::size_t size = offsets[c + 1] - offsets[c];
        const std::size_t* first = members.data() + offsets[c];
        result.cluster_size[c] = size;
        result.representative[c] = first[0];
        if (size < 2) continue;
        std::fill(sum.begin(), sum.end(), 0.0);
        for (std::size_t j = 0; j < size; ++j) {
            const float* v = x.data() + compact_of[first[j]] * dim;
            for (std::size_t d = 0; d < dim; ++d) sum[d] += v[d];
        }
        double best = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < size; ++j) {
            const float* v = x.data() + compact_of[first[j]] * dim;
            double to_sum = 0;
            for (std::size_t d = 0; d < dim; ++d) to_sum += v[d] * sum[d];
            const double mean = (to_sum - dot(v, v, dim)) / static_cast<double>(size - 1);
            result.mean_sim[first[j]] = std::clamp(mean, -1.0, 1.0);  // copies can round above 1
            best = std::max(best, result.mean_sim[first[j]]);
        }
        if (options.representative == Representative::central)
            result.representative[c] = *std::find_if(first, first + size, [&](std::size_t i) {
                return result.mean_sim[i] >= best - central_tie_tolerance;
            });
        const float* rep = x.data() + compact_of[result.representative[c]] * dim;
        for (std::size_t j = 0; j < size; ++j)
            if (first[j] != result.representative[c])
                result.sim_to_representative[first[j]] =
                    static_cast<float>(std::clamp(dot(x.data() + compact_of[first[j]] * dim, rep, dim), -1.0, 1.0));
    }
}

}  // namespace

DedupResult dedup_ideas(SearchBackend& backend, const float* vectors, std::size_t n, std::size_t dim,
                        const std::vector<char>& active, const DedupOptions& options) {
    if (!(options.threshold >= -1.0f && options.threshold <= 1.0f))
        throw UsageError("the dedup threshold must be a similarity in [-1, 1]");
    if (!active.empty() && active.size() != n)
        throw UsageError("active has " + std::to_string(active.size()) + " entries for " + std::to_string(n) + " ideas");
    const auto n_active = active.empty() ? n : static_cast<std::size_t>(std::count_if(active.begin(), active.end(), [](char a) { return a != 0; }));
    if (n_active > 0 && (dim == 0 || !vectors)) throw UsageError("the ideas have no vector data");
    std::vector<std::size_t> index;
    const std::vector<float> x = normalised_active(vectors, n, dim, active, index);
    const std::size_t m = index.size();
    DisjointSets sets(m);
    DedupResult result;
    result.n_ideas = n;
    if (m >= 2) {
        std::size_t k = std::clamp<std::size_t>(options.first_k, 1, std::min(SearchBackend::max_k, m - 1));
        std::vector<std::size_t> unresolved = first_pass(backend, x, m, dim, k, options, sets);
        while (!unresolved.empty()) {
            k = std::min(SearchBackend::max_k, k * 2);
            unresolved = next_round(backend, x, dim, unresolved, k, options.threshold, sets);
            ++result.extra_rounds;
        }
    }
    // Clusters numbered by their lowest idea; inactive ideas are singletons.
    result.cluster.assign(n, 0);
    std::vector<std::size_t> cluster_of_root(m, SIZE_MAX);
    std::size_t next = 0, r = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (r < m && index[r] == i) {
            std::size_t& c = cluster_of_root[sets.find(r++)];
            if (c == SIZE_MAX) c = next++;
            result.cluster[i] = c;
        } else {
            result.cluster[i] = next++;
        }
    }
    result.representative.assign(next, 0);
    summarise(x, dim, index, options, result);
    return result;
}

std::vector<ArchiveMatch> match_archive(SearchBackend& backend, const VectorView& archive, const float* vectors,
                                        std::size_t n, std::size_t dim, const std::vector<char>& active,
                                        float threshold) {
    if (!active.empty() && active.size() != n)
        throw UsageError("active has " + std::to_string(active.size()) + " entries for " + std::to_string(n) + " ideas");
    std::vector<ArchiveMatch> matches(n);
    std::vector<std::size_t> index;
    const std::vector<float> x = normalised_active(vectors, n, dim, active, index);
    if (index.empty()) return matches;
    const std::unique_ptr<SearchIndex> archive_index = backend.build(archive);
    for (std::size_t begin = 0; begin < index.size(); begin += queries_per_search) {
        const std::size_t end = std::min(index.size(), begin + queries_per_search);
        SearchQueries queries;
        queries.vectors = x.data() + begin * dim;
        queries.n_queries = end - begin;
        queries.dim = dim;
        const TopK top = archive_index->search(queries, 1);
        for (std::size_t q = 0; q < end - begin; ++q)
            if (top.count[q] > 0 && top.sim(q, 0) >= threshold) matches[index[begin + q]] = {top.row(q, 0), top.sim(q, 0)};
    }
    return matches;
}

}  // namespace novelty
