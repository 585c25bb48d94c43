// Host-side entry to the CUDA row normalisation (kernels/normalize_rows.cu): host rows in,
// host rows out. Internal to the engine (CUDA builds only); no CUDA types in the signatures.
// The CPU reference is novelty::normalize_rows in novelty/vectors.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "novelty/util/error.hpp"
#include "novelty/corpus/vectors.hpp"

namespace novelty {

/// L2-normalises the n_rows x dim float32 rows of `rows` (host memory, row-major) on the
/// current CUDA device and writes the result to `out` (host, n_rows x dim; `out` may equal
/// `rows`). Returns one RowProblem per row: a row holding NaN or Inf (not_finite) or only zeros
/// (zero; also every row when dim == 0) is copied unchanged. Norms are summed in float after
/// scaling each row by its largest magnitude; results agree with the double-precision CPU
/// reference to about 1e-6 relative, and the problems agree exactly. Large inputs are
/// processed in chunks of rows, so device memory use is bounded.
/// Throws novelty::Error when no CUDA device is available or a CUDA call fails, and
/// UsageError for null pointers with a non-empty shape or a shape whose size overflows.
std::vector<RowProblem> normalize_rows_cuda(const float* rows, std::size_t n_rows,
                                            std::size_t dim, float* out);

/// As normalize_rows_cuda, writing IEEE binary16 bits (n_rows x dim) to `out`, which must not
/// overlap `rows`: each value is the float32 result rounded to nearest even. Unchanged rows
/// are converted too (NaN stays NaN; +-Inf and values beyond the float16 range become +-Inf).
std::vector<RowProblem> normalize_rows_cuda_f16(const float* rows, std::size_t n_rows,
                                                std::size_t dim, std::uint16_t* out);

}  // namespace novelty
