// Grid-stride element-wise conversion; see convert_values.cuh.
#include "convert_values.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "cuda_check.cuh"

namespace novelty::kernels {
namespace {

constexpr int block_threads = 256;
constexpr std::size_t max_blocks = 65535;

__device__ inline float load(const float* p, std::size_t i) { return p[i]; }
__device__ inline float load(const __half* p, std::size_t i) { return __half2float(p[i]); }
__device__ inline float load(const __nv_bfloat16* p, std::size_t i) { return __bfloat162float(p[i]); }
__device__ inline void store(float* p, std::size_t i, float v) { p[i] = v; }
__device__ inline void store(__half* p, std::size_t i, float v) { p[i] = __float2half_rn(v); }
__device__ inline void store(__nv_bfloat16* p, std::size_t i, float v) { p[i] = __float2bfloat16_rn(v); }

template <typename In, typename Out>
__global__ void convert_kernel(const In* in, Out* out, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        store(out, i, load(in, i));
}

template <typename In, typename Out>
void launch_typed(const void* in, void* out, std::size_t n, cudaStream_t stream) {
    const auto blocks = static_cast<unsigned>(std::min(max_blocks, (n + block_threads - 1) / block_threads));
    convert_kernel<In, Out><<<blocks, block_threads, 0, stream>>>(static_cast<const In*>(in), static_cast<Out*>(out), n);
    NOVELTY_CUDA_CHECK(cudaGetLastError());
}

template <typename In>
void launch_from(const void* in, void* out, Element out_type, std::size_t n, cudaStream_t stream) {
    switch (out_type) {
        case Element::f32: return launch_typed<In, float>(in, out, n, stream);
        case Element::f16: return launch_typed<In, __half>(in, out, n, stream);
        case Element::bf16: return launch_typed<In, __nv_bfloat16>(in, out, n, stream);
    }
    throw KernelError("launch_convert_values: unknown output element type");
}

}  // namespace

void launch_convert_values(const void* in, Element in_type, void* out, Element out_type, std::size_t n,
                           cudaStream_t stream) {
    if (n == 0) return;
    if (in_type == out_type) {
        NOVELTY_CUDA_CHECK(cudaMemcpyAsync(out, in, n * element_bytes(in_type), cudaMemcpyDeviceToDevice, stream));
        return;
    }
    switch (in_type) {
        case Element::f32: return launch_from<float>(in, out, out_type, n, stream);
        case Element::f16: return launch_from<__half>(in, out, out_type, n, stream);
        case Element::bf16: return launch_from<__nv_bfloat16>(in, out, out_type, n, stream);
    }
    throw KernelError("launch_convert_values: unknown input element type");
}

}  // namespace novelty::kernels
