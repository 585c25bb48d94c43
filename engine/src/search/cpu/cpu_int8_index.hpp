// The CPU index with int8 storage (CpuBackendOptions::storage = int8): an int8 copy of the rows,
// one scale a row, screens every product; the float32 rows re-score the candidates. Internal to
// the CPU backend.
#pragma once

#include "search/index_impl.hpp"

#include <memory>

namespace novelty {

/// Quantizes and packs `corpus` (f32 or f16 rows, which must outlive the index) on `threads`
/// threads (0 = all). `vnni_instructions` false screens with sgemm on dequantized rows even where
/// the CPU has AVX512-VNNI. UsageError above 65,536 dimensions; Error naming a corpus row that
/// holds a value that is not finite.
std::unique_ptr<detail::IndexImpl> make_cpu_int8_index(const VectorView& corpus, bool vnni_instructions,
                                                       std::size_t threads);

}  // namespace novelty
