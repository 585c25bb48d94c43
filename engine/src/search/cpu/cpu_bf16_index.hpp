// The CPU index with bf16 storage (CpuBackendOptions::storage = bf16): a bf16 copy of the rows
// screens every product, the float32 rows re-score the candidates. Internal to the CPU backend.
#pragma once

#include "search/index_impl.hpp"

#include <memory>

namespace novelty {

/// Packs `corpus` (f32 or f16 rows, which must outlive the index) to bf16 on `threads` threads
/// (0 = all). `bf16_instructions` false screens with sgemm on widened rows even where the CPU has
/// AVX512-BF16.
std::unique_ptr<detail::IndexImpl> make_cpu_bf16_index(const VectorView& corpus, bool bf16_instructions,
                                                       std::size_t threads);

}  // namespace novelty
