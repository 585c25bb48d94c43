// The CUDA backend (novelty/search/backends.hpp): a CudaSearchBackend builds CudaSearchIndex objects,
// each holding its device state (cuda/device_context.hpp) and its corpus, resident on the device
// after the first call or streamed in chunks. Searches and self-joins run the tiled pipeline of
// cuda/tiled_search.hpp; candidate lists are scored pair by pair. With
// NOVELTY_CUDA_PROFILE=<file>, each call appends its time per phase there
// (cuda/phase_profile.hpp).
#include "novelty/search/backends.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "search/cuda/device_context.hpp"
#include "search/cuda/tiled_search.hpp"
#include "search/exact_rescore.hpp"
#include "search/index_impl.hpp"
#include "search/scope_rules.hpp"
#include "search/search_rules.hpp"

namespace novelty {

namespace {

constexpr std::size_t pairs_per_pass = std::size_t{1} << 24;

/// What provenance records: "cuda-<storage>" on a card, "cuda-emu-<storage>" on the emulated
/// device (at most 16 bytes: the density store and the neighbour cache keep 16).
std::string label_of(const dev::Device& device, DeviceStorage storage) {
    return (device.emulated() ? "cuda-emu-" : "cuda-") + storage_name(storage);
}

class CudaSearchIndex final : public detail::IndexImpl {
public:
    CudaSearchIndex(const CudaBackendOptions& options, const VectorView& corpus) : corpus_(corpus), ctx_(options) {}

    std::string name() const override { return ctx_.dev.name(); }
    std::string label() const override { return label_of(ctx_.dev, ctx_.storage_option); }

    TopK search(const SearchQueries& queries, std::size_t k, const SearchTuning& tuning) override {
        return run(queries.vectors, queries.n_queries, corpus_.n_rows, k,
                   ScopeRules(queries.scope, queries.n_queries, corpus_.n_rows), tuning, {});
    }

    SelfJoin self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const SearchTuning& tuning,
                       const ProgressFn& progress) override {
        TopK top = run(nullptr, n_rows, n_rows, k_stored, ScopeRules(rows_themselves(), n_rows, n_rows), tuning,
                       progress);
        return self_join_from(std::move(top), n_rows, q);
    }

    TopK search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k,
                           const SearchTuning& tuning) override;

private:
    /// One tiled call (host queries, or the corpus's own rows when `host_queries` is null), with
    /// the profile's call line and the host re-scoring a streamed 16-bit search needs.
    TopK run(const float* host_queries, std::size_t n_queries, std::size_t n_rows, std::size_t k,
             const ScopeRules& scope, const SearchTuning& tuning, const ProgressFn& progress);

    /// `found` (each query's rows, from the device) with similarities recomputed on the host
    /// from the float32 queries and the stored rows by the engine's one exact re-score rule
    /// (exact_candidates_topk, as the CPU index scores candidates), ordered by the merge rule.
    TopK rescore_on_host(const float* host_queries, const TopK& found, std::size_t threads);

    cuda::DeviceBuffer gather_rows(const std::vector<std::int64_t>& pair_row, std::vector<std::int64_t>& device_row);

    const VectorView& corpus() const { return corpus_; }

    VectorView corpus_;
    cuda::DeviceContext ctx_;
};

TopK CudaSearchIndex::run(const float* host_queries, std::size_t n_queries, std::size_t n_rows, std::size_t k,
                          const ScopeRules& scope, const SearchTuning& tuning, const ProgressFn& progress) {
    cuda::DeviceScope on_device(ctx_.dev, ctx_.device);
    cuda::PhaseProfile& profile = ctx_.profile;
    const auto call_start = std::chrono::steady_clock::now();
    profile.start_call();
    cuda::TiledSearchArgs args;
    args.corpus = &corpus();
    args.n_rows = n_rows;
    args.host_queries = host_queries;
    args.n_queries = n_queries;
    args.k = k;
    args.scope = &scope;
    args.tuning = &tuning;
    args.progress = &progress;
    bool rescored = false;
    TopK result = cuda::tiled_search(ctx_, args, rescored);
    if (n_queries == 0) return result;
    const bool resident = ctx_.resident_rows.bytes() > 0;
    if (host_queries != nullptr && ctx_.storage != kernels::Element::f32 && !rescored) {
        // A streamed corpus is not on the device when the results are known, so the final k
        // are re-scored with the float32 queries on the host, by the exact re-score rule the
        // CPU index uses for candidates (its similarities, its order) over the rows found.
        cuda::HostSpan phase(profile, "rescore_on_host");
        result = rescore_on_host(host_queries, result, tuning.threads);
    }
    if (profile.enabled()) {
        profile.add_host("call", cuda::seconds_since(call_start));
        profile.finish_call("\"queries\": " + std::to_string(n_queries) + ", \"rows\": " + std::to_string(n_rows) +
                            ", \"k\": " + std::to_string(k) + ", \"self_join\": " +
                            (host_queries == nullptr ? "true" : "false") + ", \"resident\": " +
                            (resident ? "true" : "false"));
    }
    return result;
}

TopK CudaSearchIndex::rescore_on_host(const float* host_queries, const TopK& found, std::size_t threads) {
    RowLists rows;
    for (std::size_t i = 0; i < found.n_queries; ++i)
        rows.add(std::vector<std::int64_t>(found.rows.begin() + i * found.k,
                                           found.rows.begin() + i * found.k + found.count[i]));
    SearchQueries queries;  // the rows found already lie in each query's scope
    queries.vectors = host_queries;
    queries.n_queries = found.n_queries;
    queries.dim = corpus().dim;
    return exact_candidates_topk(corpus(), queries, rows, found.k, threads);
}

/// The rows `pair_row` names, packed on the host and uploaded in the storage type (a streamed
/// corpus has no device copy to read them from); device_row becomes each pair's packed index.
cuda::DeviceBuffer CudaSearchIndex::gather_rows(const std::vector<std::int64_t>& pair_row,
                                                std::vector<std::int64_t>& device_row) {
    const VectorView& corpus = this->corpus();
    const std::size_t dim = corpus.dim;
    std::vector<std::int64_t> unique_rows = pair_row;
    std::sort(unique_rows.begin(), unique_rows.end());
    unique_rows.erase(std::unique(unique_rows.begin(), unique_rows.end()), unique_rows.end());
    const std::size_t source_row_bytes = dim * element_size(corpus.dtype);
    std::vector<unsigned char> packed(unique_rows.size() * source_row_bytes);
    for (std::size_t u = 0; u < unique_rows.size(); ++u)
        std::memcpy(packed.data() + u * source_row_bytes,
                    static_cast<const unsigned char*>(corpus.data) + unique_rows[u] * source_row_bytes, source_row_bytes);
    for (auto& row : device_row) row = std::lower_bound(unique_rows.begin(), unique_rows.end(), row) - unique_rows.begin();
    cuda::DeviceBuffer gathered(ctx_.dev, unique_rows.size() * dim * kernels::element_bytes(ctx_.storage));
    ctx_.uploader->upload(VectorView{packed.data(), corpus.dtype, unique_rows.size(), dim}, 0, unique_rows.size(),
                          gathered.get(), ctx_.stream->get());
    return gathered;
}

TopK CudaSearchIndex::search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k,
                                        const SearchTuning&) {
    cuda::DeviceScope on_device(ctx_.dev, ctx_.device);
    const VectorView& corpus = this->corpus();
    const std::size_t dim = corpus.dim;
    const ScopeRules scope(queries.scope, queries.n_queries, corpus.n_rows);
    TopK result = empty_top_k(queries.n_queries, k);
    std::vector<std::vector<std::int64_t>> lists(queries.n_queries);
    std::size_t n_pairs = 0;
    for (std::size_t i = 0; i < queries.n_queries; ++i) {
        lists[i] = scope.candidates(candidates, i);
        n_pairs += lists[i].size();
    }
    if (n_pairs == 0) return result;

    const dev::Stream stream = ctx_.stream->get();
    const void* corpus_rows =
        ctx_.resident(corpus, ctx_.budget.total > (std::size_t{1} << 30) ? ctx_.budget.total - (std::size_t{1} << 30) : 0);
    cuda::DeviceBuffer queries_d(ctx_.dev, queries.n_queries * dim * sizeof(float));
    ctx_.dev.copy(queries_d.get(), queries.vectors, queries.n_queries * dim * sizeof(float), dev::Copy::host_to_device,
                  stream);
    // Pairs go in passes of bounded size; without a resident corpus each pass gathers the rows
    // it needs on the host and uploads them.
    std::size_t query = 0;
    while (query < queries.n_queries) {
        std::vector<std::int32_t> pair_query;
        std::vector<std::int64_t> pair_row;
        std::vector<std::size_t> first_query_pair;
        const std::size_t pass_first = query;
        while (query < queries.n_queries && (pair_row.empty() || pair_row.size() + lists[query].size() <= pairs_per_pass)) {
            first_query_pair.push_back(pair_row.size());
            for (std::int64_t row : lists[query]) {
                pair_query.push_back(static_cast<std::int32_t>(query));
                pair_row.push_back(row);
            }
            ++query;
        }
        first_query_pair.push_back(pair_row.size());
        std::vector<std::int64_t> device_row = pair_row;
        cuda::DeviceBuffer gathered;
        const void* rows_d = corpus_rows;
        if (rows_d == nullptr) {
            gathered = gather_rows(pair_row, device_row);
            rows_d = gathered.get();
        }
        cuda::DeviceBuffer pair_query_d(ctx_.dev, pair_query.size() * sizeof(std::int32_t));
        cuda::DeviceBuffer pair_row_d(ctx_.dev, device_row.size() * sizeof(std::int64_t));
        cuda::DeviceBuffer sims_d(ctx_.dev, pair_row.size() * sizeof(float));
        cuda::copy_to_device(ctx_.dev, pair_query, pair_query_d, stream);
        cuda::copy_to_device(ctx_.dev, device_row, pair_row_d, stream);
        ctx_.dev.candidate_dots(queries_d.as<float>(), rows_d, ctx_.storage, static_cast<std::int64_t>(dim),
                                       pair_query_d.as<std::int32_t>(), pair_row_d.as<std::int64_t>(),
                                       static_cast<std::int64_t>(pair_row.size()), sims_d.as<float>(), stream);
        std::vector<float> sims(pair_row.size());
        ctx_.dev.copy(sims.data(), sims_d.get(), sims.size() * sizeof(float), dev::Copy::device_to_host, stream);
        ctx_.stream->synchronize();
        for (std::size_t i = pass_first; i < query; ++i) {
            const std::size_t first = first_query_pair[i - pass_first];
            const std::size_t n = first_query_pair[i - pass_first + 1] - first;
            result.count[i] = best_of(sims.data() + first, pair_row.data() + first, n, k, result.rows.data() + i * k,
                                      result.sims.data() + i * k);
        }
    }
    return result;
}

/// The CUDA backend: its options; each index it builds holds its own device state.
class CudaSearchBackend final : public detail::BackendImpl {
public:
    explicit CudaSearchBackend(const CudaBackendOptions& options)
        : options_(options), device_(dev::select_device(options.emulated)) {
        const int count = device_.count();
        if (count == 0) throw Error("the CUDA backend needs a CUDA device, but none is available");
        if (options.device < 0 || options.device >= count)
            throw UsageError("CUDA device " + std::to_string(options.device) + " does not exist (" +
                             std::to_string(count) + " found)");
    }
    std::string name() const override { return device_.name(); }
    std::string label() const override { return label_of(device_, options_.storage); }

    std::unique_ptr<detail::IndexImpl> build(const VectorView& corpus, const SearchTuning&) const override {
        return std::make_unique<CudaSearchIndex>(options_, corpus);
    }

private:
    CudaBackendOptions options_;
    dev::Device& device_;
};

}  // namespace

std::unique_ptr<SearchBackend> make_cuda_backend(const CudaBackendOptions& options) {
    return std::make_unique<SearchBackend>(std::make_unique<CudaSearchBackend>(options));
}

}  // namespace novelty
