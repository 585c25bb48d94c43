// SearchIndex's public methods: argument checks, query normalisation, then the backend's
// implementation (search/index_impl.hpp); SearchBackend::build.
#include "novelty/util/error.hpp"
#include "novelty/search/search.hpp"

#include <bit>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <string>

#include "util/parallel_for.hpp"
#include "search/index_impl.hpp"
#include "search/scope_rules.hpp"
#include "search/search_counters.hpp"

namespace novelty {

void RowLists::add(const std::vector<std::int64_t>& item_rows) {
    if (offsets.empty()) offsets.push_back(0);
    rows.insert(rows.end(), item_rows.begin(), item_rows.end());
    offsets.push_back(rows.size());
}

void check_search_corpus(const VectorView& corpus) {
    if (corpus.n_rows == 0) throw UsageError("the corpus is empty: there is nothing to search");
    if (corpus.dim == 0) throw UsageError("the corpus vectors have dimension 0");
    if (!corpus.data) throw UsageError("the corpus has no vector data");
    if (corpus.dtype == ElementType::bf16)
        throw UsageError("corpus rows must be float32 or float16, not bfloat16: bf16 is a storage the index makes from "
                         "them (--storage bf16 on the CPU, --device-storage bf16 on CUDA)");
    if (corpus.n_rows > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw UsageError("the corpus has more than 2^31 - 1 rows, which this engine does not support");
}

namespace {

void check_k(std::size_t k) {
    if (k < 1 || k > SearchBackend::max_k)
        throw UsageError("k must be between 1 and " + std::to_string(SearchBackend::max_k) + ", not " + std::to_string(k));
}

/// Where a query failed the checks: the lowest such query and why (npos: none failed).
struct BadQuery {
    std::size_t index = std::numeric_limits<std::size_t>::max();
    bool zero = false;  ///< true: zero norm; false: NaN or Inf
};

constexpr std::size_t queries_per_block = 256;

// Checks shapes and returns the queries L2-normalised (a zero or non-finite query is refused,
// naming the lowest such query). Each query's norm is summed in double in a fixed order, so the
// result does not depend on how the queries are split between threads; blocks of 256
// queries run on all cores and write straight into `storage` (no separate copy pass).
SearchQueries normalised(const VectorView& corpus, const SearchQueries& queries, std::unique_ptr<float[]>& storage) {
    if (queries.n_queries > 0 && queries.dim != corpus.dim)
        throw UsageError("dimension mismatch: the queries have dimension " + std::to_string(queries.dim) +
                         " but the corpus has " + std::to_string(corpus.dim));
    if (queries.n_queries > 0 && !queries.vectors) throw UsageError("the queries have no vector data");
    check_scope(queries.scope, queries.n_queries, corpus.n_rows);
    if (queries.unit_norm) return queries;  // normalised once already: used as given
    const std::size_t dim = queries.dim, n = queries.n_queries;
    storage.reset(new float[n * dim]);
    std::mutex bad_mutex;
    BadQuery bad;
    parallel_for_blocks((n + queries_per_block - 1) / queries_per_block, 0, [&](std::size_t block) {
        const std::size_t end = std::min(n, (block + 1) * queries_per_block);
        for (std::size_t i = block * queries_per_block; i < end; ++i) {
            const float* in = queries.vectors + i * dim;
            // Four interleaved partial sums (independent chains); a NaN or an infinity in the
            // query makes the sum of squares non-finite, and nothing else can.
            double part[4] = {0, 0, 0, 0};
            std::size_t c = 0;
            for (; c + 4 <= dim; c += 4)
                for (std::size_t j = 0; j < 4; ++j) part[j] += double(in[c + j]) * in[c + j];
            for (; c < dim; ++c) part[0] += double(in[c]) * in[c];
            const double sum = (part[0] + part[1]) + (part[2] + part[3]);
            const bool finite = std::isfinite(sum);
            if (!finite || sum == 0) {
                std::lock_guard<std::mutex> lock(bad_mutex);
                if (i < bad.index) bad = BadQuery{i, finite};
                return;  // later queries of this block cannot be the lowest bad one
            }
            const double inv = 1.0 / std::sqrt(sum);
            float* out = storage.get() + i * dim;
            for (std::size_t c = 0; c < dim; ++c) out[c] = static_cast<float>(in[c] * inv);
        }
    });
    if (bad.index != BadQuery{}.index)
        throw UsageError("query " + std::to_string(bad.index) + (bad.zero ? " is a zero vector" : " contains NaN or Inf"));
    SearchQueries out = queries;
    out.vectors = storage.get();
    return out;
}

std::atomic<std::size_t> indexes_built{0};

}  // namespace

std::size_t search_indexes_built() { return indexes_built.load(); }

SearchIndex::SearchIndex(const VectorView& corpus, std::unique_ptr<detail::IndexImpl> impl)
    : corpus_(corpus), impl_(std::move(impl)) {
    check_search_corpus(corpus);
    if (!impl_) throw UsageError("a search index needs a backend's implementation");
    ++indexes_built;
}

SearchIndex::~SearchIndex() = default;

std::string SearchIndex::name() const { return impl_->name(); }
std::string SearchIndex::label() const { return impl_->label(); }

SearchBackend::SearchBackend(std::unique_ptr<detail::BackendImpl> impl) : impl_(std::move(impl)) {
    if (!impl_) throw UsageError("a search backend needs an implementation");
}

SearchBackend::~SearchBackend() = default;

std::string SearchBackend::name() const { return impl_->name(); }
std::string SearchBackend::label() const { return impl_->label(); }

std::unique_ptr<SearchIndex> SearchBackend::build(const VectorView& corpus) const {
    check_search_corpus(corpus);  // before the backend loads (packs, uploads) the rows
    auto index = std::make_unique<SearchIndex>(corpus, impl_->build(corpus, tuning));
    index->tuning = tuning;
    return index;
}

TopK SearchIndex::search(const SearchQueries& queries, std::size_t k) {
    check_k(k);
    std::unique_ptr<float[]> storage;
    return impl_->search(normalised(corpus_, queries, storage), k, tuning);
}

SelfJoin SearchIndex::self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const ProgressFn& progress) {
    if (n_rows == 0 || n_rows > corpus_.n_rows)
        throw UsageError("self-join prefix must be 1.." + std::to_string(corpus_.n_rows) + " rows, not " +
                         std::to_string(n_rows));
    if (q < 1) throw UsageError("q must be at least 1");
    if (k_stored < q) throw UsageError("k_stored must be at least q");
    check_k(k_stored);
    SelfJoin join = impl_->self_join(n_rows, q, k_stored, tuning, progress);
    join.computed_by = label();
    return join;
}

TopK SearchIndex::search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k) {
    check_k(k);
    if (candidates.n_items() != queries.n_queries)
        throw UsageError("candidates have " + std::to_string(candidates.n_items()) + " lists for " +
                         std::to_string(queries.n_queries) + " queries");
    for (std::int64_t row : candidates.rows)
        if (row < 0 || static_cast<std::size_t>(row) >= corpus_.n_rows)
            throw UsageError("candidate row " + std::to_string(row) + " is outside the corpus (" +
                             std::to_string(corpus_.n_rows) + " rows)");
    std::unique_ptr<float[]> storage;
    return impl_->search_candidates(normalised(corpus_, queries, storage), candidates, k, tuning);
}

std::size_t RowFilter::count() const {
    std::size_t n = 0;
    for (std::uint64_t word : words) n += static_cast<std::size_t>(std::popcount(word));
    return n;
}

}  // namespace novelty
