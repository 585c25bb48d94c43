// Row-wise top-k selection on the device through RAFT's raft::matrix::select_k. This header
// keeps RAFT out of everything that includes it: the RAFT resources live behind a pointer.
//
// Shapes (row-major, device memory): in_vals is n_rows x len float32; in_idx, when not null,
// is n_rows x len int64 (the payload selected with each value; null means column numbers
// 0..len-1); out_vals / out_idx are n_rows x k. 1 <= k <= len. The k largest values of each
// row are written, in no particular order; among equal values at the k-th place any may be
// chosen (callers that need a tie rule re-sort what they copy back). -inf values may be
// selected when a row has fewer than k finite values.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace novelty::kernels {

class SelectK {
public:
    /// `workspace_bytes`: the most device memory RAFT may keep in its temporary-buffer pool.
    explicit SelectK(std::size_t workspace_bytes);
    ~SelectK();
    SelectK(const SelectK&) = delete;
    SelectK& operator=(const SelectK&) = delete;

    /// Queues the selection on `stream`. Throws KernelError for bad shapes or a RAFT/CUDA
    /// failure.
    void largest(const float* in_vals, const std::int64_t* in_idx, std::int64_t n_rows, std::int64_t len,
                 std::int64_t k, float* out_vals, std::int64_t* out_idx, cudaStream_t stream);

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace novelty::kernels
