// Similarities of (query, corpus row) pairs: the device half of candidate scoring, where each
// query is compared only with its own candidate rows (compressed sparse rows flattened to pairs).
//
// Shapes (device memory): queries is n_queries x dim float32, row-major; rows is a row-major
// matrix of `row_type` values with `dim` columns; pair p compares query pair_query[p] (or, when
// pair_query is null, query p / pairs_per_query) with row pair_row[p]; out has n_pairs floats.
// A pair whose row is negative (an empty slot) gets -inf. Products are summed in float32 from float32 operands
// (16-bit rows are widened exactly). Work is queued on `stream`; nothing is synchronised.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.cuh"

namespace novelty::kernels {

/// One warp per pair. Throws KernelError when the launch fails.
void launch_candidate_dots(const float* queries, const void* rows, Element row_type, std::int64_t dim,
                           const std::int32_t* pair_query, const std::int64_t* pair_row, std::int64_t n_pairs,
                           float* out, cudaStream_t stream, std::int64_t pairs_per_query = 1);

}  // namespace novelty::kernels
