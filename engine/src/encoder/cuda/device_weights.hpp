// A BERT-family model's weights on the device: matrices and embedding tables in 16 bits (float16
// or bfloat16), biases and layer-norm parameters in float32. Q, K and V are fused into one
// [3h x h] matrix so that one GEMM computes all three. Internal to engine/src/encoder/cuda.
#pragma once

#include "element_type.cuh"
#include "encoder/bert_model.hpp"
#include "search/cuda/device_memory.hpp"

#include <vector>

namespace novelty::encoder::cuda {

using novelty::cuda::DeviceBuffer;

struct DeviceLayer {
    DeviceBuffer qkv_w, qkv_b;            // [3h x h] 16-bit, [3h] f32
    DeviceBuffer attn_out_w, attn_out_b;  // [h x h], [h]
    DeviceBuffer attn_ln_g, attn_ln_b;
    DeviceBuffer inter_w, inter_b;        // [i x h], [i]
    DeviceBuffer out_w, out_b;            // [h x i], [h]
    DeviceBuffer out_ln_g, out_ln_b;
};

struct DeviceWeights {
    kernels::Element type = kernels::Element::f16;
    DeviceBuffer word, pos, type_row;  // 16-bit tables
    DeviceBuffer emb_ln_g, emb_ln_b;
    std::vector<DeviceLayer> layers;
    std::size_t bytes = 0;  ///< device memory held
};

/// Uploads `model` to `device` on `stream`, converting its matrices to `type` (f16 or bf16) there.
DeviceWeights upload_weights(dev::Device& device, const BertModel& model, kernels::Element type, dev::Stream stream);

}  // namespace novelty::encoder::cuda
