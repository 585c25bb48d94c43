// Value conversion between the device element types (float32 <-> float16 / bfloat16).
//
// Shapes: `in` and `out` each hold n values in device memory, of the types named; they must not
// overlap unless the types are equal (then this is a copy). Conversion to a 16-bit type rounds
// to nearest even; values beyond the float16 range become +-Inf; NaN stays NaN. Work is queued
// on `stream`; nothing is synchronised. Throws KernelError when the launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "element_type.cuh"

namespace novelty::kernels {

void launch_convert_values(const void* in, Element in_type, void* out, Element out_type, std::size_t n,
                           cudaStream_t stream);

}  // namespace novelty::kernels
