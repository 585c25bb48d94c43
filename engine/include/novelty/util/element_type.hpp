// The one element-type enum of the engine: what a vector file holds (.npy float32 or float16),
// what a VectorView points at, and how the CUDA index stores the corpus on the device. The
// kernels (which include no engine header) mirror it as kernels::Element with the same values;
// engine/src/search/cuda/device_context.hpp converts, checked at compile time.
#pragma once

#include <cstddef>

namespace novelty {

enum class ElementType { f32 = 0, f16 = 1, bf16 = 2 };

/// "f32", "f16" or "bf16".
const char* element_name(ElementType type);
/// Bytes per value: 4 or 2.
std::size_t element_size(ElementType type);

}  // namespace novelty
