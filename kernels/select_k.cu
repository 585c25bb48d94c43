// See select_k.cuh. The only translation unit that includes RAFT: one instantiation of
// raft::matrix::select_k<float, int64_t>, which takes nvcc about half a minute to compile.
#include "select_k.cuh"

#include <raft/core/device_mdspan.hpp>
#include <raft/core/device_resources.hpp>
#include <raft/core/resource/cuda_stream.hpp>
#include <raft/core/resource/device_memory_resource.hpp>
#include <raft/matrix/select_k.cuh>

#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "cuda_check.cuh"

namespace novelty::kernels {

struct SelectK::State {
    raft::device_resources resources;
    raft::matrix::SelectAlgo algorithm = raft::matrix::SelectAlgo::kAuto;
};

SelectK::SelectK(std::size_t workspace_bytes) : state_(std::make_unique<State>()) {
    // Benchmarks may pin RAFT's algorithm (the number of a raft::matrix::SelectAlgo value);
    // RAFT's own shape heuristic decides otherwise.
    if (const char* algo = std::getenv("NOVELTY_CUDA_SELECT_ALGO"); algo != nullptr && *algo != '\0')
        state_->algorithm = static_cast<raft::matrix::SelectAlgo>(std::atoi(algo));
    // A pool, so that repeated selections do not cudaMalloc/cudaFree (which synchronise).
    raft::resource::set_workspace_to_pool_resource(state_->resources, workspace_bytes);
}

SelectK::~SelectK() = default;

void SelectK::largest(const float* in_vals, const std::int64_t* in_idx, std::int64_t n_rows, std::int64_t len,
                      std::int64_t k, float* out_vals, std::int64_t* out_idx, cudaStream_t stream) {
    if (n_rows <= 0) return;
    if (k < 1 || k > len)
        throw KernelError("select_k: k must be 1.." + std::to_string(len) + ", not " + std::to_string(k));
    try {
        raft::resource::set_cuda_stream(state_->resources, cuda::stream_ref{stream});
        auto values = raft::make_device_matrix_view<const float, std::int64_t, raft::row_major>(in_vals, n_rows, len);
        std::optional<raft::device_matrix_view<const std::int64_t, std::int64_t, raft::row_major>> indices;
        if (in_idx != nullptr)
            indices = raft::make_device_matrix_view<const std::int64_t, std::int64_t, raft::row_major>(in_idx, n_rows, len);
        auto best_values = raft::make_device_matrix_view<float, std::int64_t, raft::row_major>(out_vals, n_rows, k);
        auto best_indices =
            raft::make_device_matrix_view<std::int64_t, std::int64_t, raft::row_major>(out_idx, n_rows, k);
        raft::matrix::select_k<float, std::int64_t>(state_->resources, values, indices, best_values, best_indices,
                                                     /*select_min=*/false, /*sorted=*/false, state_->algorithm);
    } catch (const KernelError&) {
        throw;
    } catch (const std::exception& e) {
        throw KernelError(std::string("RAFT select_k failed: ") + e.what());
    }
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace novelty::kernels
