// The CPU backend: exact cosine top-k over tiles. Each worker takes a block of queries, computes
// the block's similarities to one corpus tile at a time with OpenBLAS sgemm, and feeds them to
// one screened collector per query behind a threshold filter; the candidates are re-scored with
// exact_dot (screening.hpp). Memory is one tile of similarities per worker, never n_queries x N.
// The bf16 and int8 indexes (cpu_bf16_index.cpp, cpu_int8_index.cpp) run the same loop on narrow
// products (screened_index.hpp).
#include "search/cpu/cpu_bf16_index.hpp"
#include "search/cpu/cpu_int8_index.hpp"
#include "search/cpu/cpu_self_join.hpp"
#include "search/exact_rescore.hpp"
#include "search/cpu/screening.hpp"
#include "search/cpu/tiled_topk.hpp"
#include "search/cpu/topk_heap.hpp"
#include "search/index_impl.hpp"
#include "search/search_rules.hpp"
#include "util/parallel_for.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/error.hpp"

#include <cblas.h>

#include <algorithm>
#include <vector>

namespace novelty {

namespace {

// Top-k of every query by sgemm tiles, exactly (screened_topk; `rows`: the maxima of the corpus
// rows' norms).
TopK run_topk(const TopKProblem& problem, const ScreenNorms& rows, const ProgressFn& progress) {
    openblas_set_num_threads(1);  // our own threads call sgemm concurrently
    const auto sgemm_tiles = [&problem](const QueryBlock& block) {
        return [&problem, &block, buffer = std::vector<float>()](std::size_t c0, std::size_t n_tile,
                                                                   float* sims) mutable {
            const int dim = static_cast<int>(problem.corpus.dim);
            const float* tile = rows_as_f32(problem.corpus, c0, n_tile, buffer);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(block.n), static_cast<int>(n_tile),
                        dim, 1.0f, block.vectors.data(), dim, tile, dim, 0.0f, sims, static_cast<int>(n_tile));
        };
    };
    return screened_topk(problem, rows, ScreenOperands::f32, 1, sgemm_tiles, progress);
}

class CpuSearchIndex final : public detail::IndexImpl {
public:
    CpuSearchIndex(const VectorView& corpus, std::size_t threads)
        : corpus_(corpus), row_norms_(max_screen_norms(corpus, ScreenOperands::f32, threads)) {}
    std::string name() const override { return "cpu"; }

    TopK search(const SearchQueries& queries, std::size_t k, const SearchTuning& tuning) override {
        return run_topk(search_problem(corpus_, queries, k, tuning), row_norms_, {});
    }

    SelfJoin self_join(std::size_t n_rows, std::size_t q, std::size_t k_stored, const SearchTuning& tuning,
                       const ProgressFn& progress) override {
        // The symmetric join does half the products but keeps every row's collector in memory;
        // past a budget, search the prefix against itself block by block instead.
        const std::size_t budget = tuning.self_join_memory ? tuning.self_join_memory : default_self_join_memory;
        if (symmetric_join_bytes(n_rows, k_stored) <= budget)
            return symmetric_self_join(corpus_, n_rows, q, k_stored, tuning, progress);
        return self_join_from(run_topk(self_join_problem(corpus_, n_rows, k_stored, tuning), row_norms_, progress),
                              n_rows, q);
    }

    TopK search_candidates(const SearchQueries& queries, const RowLists& candidates, std::size_t k,
                           const SearchTuning& tuning) override {
        return exact_candidates_topk(corpus_, queries, candidates, k, tuning.threads);
    }

private:
    VectorView corpus_;
    ScreenNorms row_norms_;  // maxima over the corpus rows: the screening margin's bound
};

class CpuSearchBackend final : public detail::BackendImpl {
public:
    explicit CpuSearchBackend(const CpuBackendOptions& options) : options_(options) {}
    std::string name() const override { return "cpu"; }
    std::string label() const override {
        return options_.storage == CpuStorage::f32 ? "cpu" : std::string("cpu-") + cpu_storage_name(options_.storage);
    }

    std::unique_ptr<detail::IndexImpl> build(const VectorView& corpus, const SearchTuning& tuning) const override {
        switch (options_.storage) {
            case CpuStorage::bf16: return make_cpu_bf16_index(corpus, options_.screen_instructions, tuning.threads);
            case CpuStorage::int8: return make_cpu_int8_index(corpus, options_.screen_instructions, tuning.threads);
            case CpuStorage::f32: break;
        }
        return std::make_unique<CpuSearchIndex>(corpus, tuning.threads);
    }

private:
    CpuBackendOptions options_;
};

}  // namespace

std::unique_ptr<SearchBackend> make_cpu_backend() { return make_cpu_backend(CpuBackendOptions{}); }

std::unique_ptr<SearchBackend> make_cpu_backend(const CpuBackendOptions& options) {
    return std::make_unique<SearchBackend>(std::make_unique<CpuSearchBackend>(options));
}

}  // namespace novelty
