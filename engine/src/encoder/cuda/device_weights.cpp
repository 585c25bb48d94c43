#include "encoder/cuda/device_weights.hpp"


namespace novelty::encoder::cuda {

namespace {

/// Where the weights go: the device, its stream, and the bytes uploaded so far.
struct Target {
    dev::Device& device;
    dev::Stream stream;
    std::size_t& bytes;
};

DeviceBuffer upload_f32(const std::vector<float>& values, Target& t) {
    DeviceBuffer buffer(t.device, values.size() * sizeof(float));
    t.device.copy(buffer.get(), values.data(), buffer.bytes(), dev::Copy::host_to_device, t.stream);
    t.device.synchronize(t.stream);  // the host vector may be a temporary
    t.bytes += buffer.bytes();
    return buffer;
}

/// Uploads the concatenation of `parts` as 16-bit values.
DeviceBuffer upload_half(const std::vector<const std::vector<float>*>& parts, kernels::Element type, Target& t) {
    std::size_t n = 0;
    for (const auto* part : parts) n += part->size();
    DeviceBuffer staging(t.device, n * sizeof(float));
    std::size_t offset = 0;
    for (const auto* part : parts) {
        t.device.copy(staging.as<float>() + offset, part->data(), part->size() * sizeof(float),
                      dev::Copy::host_to_device, t.stream);
        offset += part->size();
    }
    DeviceBuffer out(t.device, n * 2);
    t.device.convert_values(staging.get(), kernels::Element::f32, out.get(), type, n, t.stream);
    t.device.synchronize(t.stream);
    t.bytes += out.bytes();
    return out;
}

}  // namespace

DeviceWeights upload_weights(dev::Device& device, const BertModel& model, kernels::Element type, dev::Stream stream) {
    DeviceWeights w;
    w.type = type;
    Target t{device, stream, w.bytes};
    w.word = upload_half({&model.word_embeddings()}, type, t);
    w.pos = upload_half({&model.position_embeddings()}, type, t);
    w.type_row = upload_half({&model.type_embeddings()}, type, t);  // row 0 is used
    w.emb_ln_g = upload_f32(model.embedding_ln_gamma(), t);
    w.emb_ln_b = upload_f32(model.embedding_ln_beta(), t);
    for (const BertLayer& l : model.layers()) {
        DeviceLayer d;
        d.qkv_w = upload_half({&l.q_w, &l.k_w, &l.v_w}, type, t);
        std::vector<float> qkv_b(l.q_b);
        qkv_b.insert(qkv_b.end(), l.k_b.begin(), l.k_b.end());
        qkv_b.insert(qkv_b.end(), l.v_b.begin(), l.v_b.end());
        d.qkv_b = upload_f32(qkv_b, t);
        d.attn_out_w = upload_half({&l.attn_out_w}, type, t);
        d.attn_out_b = upload_f32(l.attn_out_b, t);
        d.attn_ln_g = upload_f32(l.attn_ln_g, t);
        d.attn_ln_b = upload_f32(l.attn_ln_b, t);
        d.inter_w = upload_half({&l.inter_w}, type, t);
        d.inter_b = upload_f32(l.inter_b, t);
        d.out_w = upload_half({&l.out_w}, type, t);
        d.out_b = upload_f32(l.out_b, t);
        d.out_ln_g = upload_f32(l.out_ln_g, t);
        d.out_ln_b = upload_f32(l.out_ln_b, t);
        w.layers.push_back(std::move(d));
    }
    return w;
}

}  // namespace novelty::encoder::cuda
