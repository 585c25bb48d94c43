// Device-side reading of stored values as float32, for kernels templated on the storage type
// (float, __half, __nv_bfloat16). Only .cu files include this header.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace novelty::kernels {

__device__ inline float widen(float v) { return v; }
__device__ inline float widen(__half v) { return __half2float(v); }
__device__ inline float widen(__nv_bfloat16 v) { return __bfloat162float(v); }

}  // namespace novelty::kernels
