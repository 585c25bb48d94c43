#include "encoder/cuda/device_weights.hpp"

#include "convert_values.cuh"
#include "cuda_check.cuh"

namespace novelty::encoder::cuda {

namespace {

DeviceBuffer upload_f32(const std::vector<float>& values, std::size_t& bytes) {
    DeviceBuffer buffer(values.size() * sizeof(float));
    NOVELTY_CUDA_CHECK(cudaMemcpy(buffer.get(), values.data(), buffer.bytes(), cudaMemcpyHostToDevice));
    bytes += buffer.bytes();
    return buffer;
}

/// Uploads the concatenation of `parts` as 16-bit values.
DeviceBuffer upload_half(const std::vector<const std::vector<float>*>& parts, kernels::Element type,
                         cudaStream_t stream, std::size_t& bytes) {
    std::size_t n = 0;
    for (const auto* part : parts) n += part->size();
    DeviceBuffer staging(n * sizeof(float));
    std::size_t offset = 0;
    for (const auto* part : parts) {
        NOVELTY_CUDA_CHECK(cudaMemcpy(staging.as<float>() + offset, part->data(), part->size() * sizeof(float),
                                      cudaMemcpyHostToDevice));
        offset += part->size();
    }
    DeviceBuffer out(n * 2);
    kernels::launch_convert_values(staging.get(), kernels::Element::f32, out.get(), type, n, stream);
    NOVELTY_CUDA_CHECK(cudaStreamSynchronize(stream));
    bytes += out.bytes();
    return out;
}

}  // namespace

DeviceWeights upload_weights(const BertModel& model, kernels::Element type, cudaStream_t stream) {
    DeviceWeights w;
    w.type = type;
    std::size_t& bytes = w.bytes;
    w.word = upload_half({&model.word_embeddings()}, type, stream, bytes);
    w.pos = upload_half({&model.position_embeddings()}, type, stream, bytes);
    w.type_row = upload_half({&model.type_embeddings()}, type, stream, bytes);  // row 0 is used
    w.emb_ln_g = upload_f32(model.embedding_ln_gamma(), bytes);
    w.emb_ln_b = upload_f32(model.embedding_ln_beta(), bytes);
    for (const BertLayer& l : model.layers()) {
        DeviceLayer d;
        d.qkv_w = upload_half({&l.q_w, &l.k_w, &l.v_w}, type, stream, bytes);
        std::vector<float> qkv_b(l.q_b);
        qkv_b.insert(qkv_b.end(), l.k_b.begin(), l.k_b.end());
        qkv_b.insert(qkv_b.end(), l.v_b.begin(), l.v_b.end());
        d.qkv_b = upload_f32(qkv_b, bytes);
        d.attn_out_w = upload_half({&l.attn_out_w}, type, stream, bytes);
        d.attn_out_b = upload_f32(l.attn_out_b, bytes);
        d.attn_ln_g = upload_f32(l.attn_ln_g, bytes);
        d.attn_ln_b = upload_f32(l.attn_ln_b, bytes);
        d.inter_w = upload_half({&l.inter_w}, type, stream, bytes);
        d.inter_b = upload_f32(l.inter_b, bytes);
        d.out_w = upload_half({&l.out_w}, type, stream, bytes);
        d.out_b = upload_f32(l.out_b, bytes);
        d.out_ln_g = upload_f32(l.out_ln_g, bytes);
        d.out_ln_b = upload_f32(l.out_ln_b, bytes);
        w.layers.push_back(std::move(d));
    }
    return w;
}

}  // namespace novelty::encoder::cuda
