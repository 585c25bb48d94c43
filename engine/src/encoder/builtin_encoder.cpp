// The built-in Embedder on the CPU: tokens -> BERT forward pass -> mean or CLS pooling -> L2;
// and the choice between it and the CUDA encoder.
#include "encoder/bert_model.hpp"
#include "device/device.hpp"
#include "encoder/cuda_encoder.hpp"
#include "encoder/encoder_parts.hpp"
#include "encoder/model_tokenizer.hpp"
#include "encoder/precision_auto.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"
#include "util/parallel_for.hpp"

#include <cblas.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

namespace novelty {

namespace fs = std::filesystem;

std::string embedding_text(const std::string& title, const std::string& text) {
    auto trim = [](const std::string& s) {
        const auto first = s.find_first_not_of(" \t\r\n");
        if (first == std::string::npos) return std::string();
        return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
    };
    const std::string a = trim(title), b = trim(text);
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + "\n\n" + b;
}

namespace {

// Forward-pass buffers lent to the groups of one embed() call: a group takes one (or a new one when
// all are out) and gives it back, so each worker reuses its buffers from group to group; all are
// freed when the call ends.
class ScratchPool {
public:
    struct Lease {
        encoder::ForwardScratch scratch;
        std::vector<float> hidden;
    };
    std::unique_ptr<Lease> take() {
        std::lock_guard lock(mutex_);
        if (free_.empty()) return std::make_unique<Lease>();
        auto lease = std::move(free_.back());
        free_.pop_back();
        return lease;
    }
    void give(std::unique_ptr<Lease> lease) {
        std::lock_guard lock(mutex_);
        free_.push_back(std::move(lease));
    }

private:
    std::mutex mutex_;
    std::vector<std::unique_ptr<Lease>> free_;
};

class CpuEncoder final : public Embedder {
public:
    CpuEncoder(const std::string& model_dir, const EncoderOptions& options)
        : name_(encoder::model_name(model_dir)),
          model_(encoder::BertModel::load(model_dir)),
          tokenizer_(encoder::ModelTokenizer::load(model_dir)),
          pooling_(encoder::read_pooling(model_dir)),
          options_(options),
          precision_(resolve_encoder_precision(options.precision, model_dir, options.threads).precision) {
        encoder::check_lengths(model_dir, tokenizer_, model_.config());
        if (precision_ == "bf16")
            model_.set_linear_precision(bf16_kernel_available() ? encoder::LinearPrecision::bf16_avx512
                                                                       : encoder::LinearPrecision::bf16_float32);
        if (precision_ == "int8")
            model_.set_linear_precision(int8_kernel_available() ? encoder::LinearPrecision::int8_kernel
                                                              : encoder::LinearPrecision::int8_float32,
                                        encoder::int8_linear_layers);
    }

    std::string name() const override { return name_; }
    std::size_t dim() const override { return model_.config().hidden; }
    std::string pooling() const override { return encoder::pooling_name(pooling_); }
    std::string device() const override { return "cpu"; }
    std::string precision() const override { return precision_; }

    std::vector<float> embed(const std::vector<std::string>& texts) override {
        const std::size_t n = texts.size(), h = dim();
        std::vector<std::vector<std::int32_t>> tokens(n);
        parallel_for_blocks(n, options_.threads, [&](std::size_t i) { tokens[i] = tokenizer_.encode(texts[i]); });
        const encoder::TokenGroups g = encoder::group_by_tokens(tokens, options_.tokens_per_group);
        std::vector<float> out(n * h);
        openblas_set_num_threads(1);
        ScratchPool pool;
        parallel_for_blocks(g.groups.size(), options_.threads, [&](std::size_t k) {
            const auto [begin, end] = g.groups[k];
            std::vector<const std::vector<std::int32_t>*> seqs;
            for (std::size_t i = begin; i < end; ++i) seqs.push_back(&tokens[g.order[i]]);
            std::unique_ptr<ScratchPool::Lease> lease = pool.take();
            std::vector<float>& hidden = lease->hidden;
            model_.forward(seqs, hidden, lease->scratch);
            std::size_t row = 0;
            for (std::size_t i = begin; i < end; ++i) {
                const std::size_t len = tokens[g.order[i]].size();
                encoder::pool_and_normalize(hidden.data() + row * h, len, h, pooling_, out.data() + g.order[i] * h);
                row += len;
            }
            pool.give(std::move(lease));
        });
        return out;
    }

private:
    std::string name_;
    encoder::BertModel model_;
    encoder::ModelTokenizer tokenizer_;
    encoder::Pooling pooling_;
    EncoderOptions options_;
    std::string precision_;
};

}  // namespace

std::string resolve_encoder_device(const std::string& device) {
    if (device == "cpu") return "cpu";
    if (device == "auto") return (cuda_compiled() || dev::emulation_forced()) && !list_devices().empty() ? "cuda" : "cpu";
    if (device == "cuda-emulated") return device;
    if (device == "cuda") {
        if (!cuda_compiled() && !dev::emulation_forced())
            throw UsageError("device cuda: this build has no CUDA encoder (CUDA was not compiled in; rebuild with "
                             "scripts/build.sh cuda on a machine with nvcc)",
                             "device");
        if (list_devices().empty())
            throw UsageError("device cuda: no CUDA device is available on this machine (" + cuda_versions() +
                                 "); use the cpu or auto device",
                             "device");
        return "cuda";
    }
    throw UsageError("device must be auto, cpu, cuda or cuda-emulated, not '" + device + "'", "device");
}

void check_encoder_precision_name(const std::string& precision) {
    if (precision != "auto" && precision != "f32" && precision != "bf16" && precision != "int8")
        throw UsageError("precision must be auto, f32, bf16 or int8, not '" + precision + "'", "precision");
}

ResolvedPrecision resolve_encoder_precision(const std::string& precision, const std::string& model_dir,
                                            std::size_t threads, bool recalibrate) {
    check_encoder_precision_name(precision);
    if (precision != "auto") return {precision, "as asked"};
    const encoder::AutoPrecision chosen = encoder::resolve_auto_precision(model_dir, threads, recalibrate);
    return {chosen.precision, chosen.reason};
}

std::unique_ptr<Embedder> load_builtin_encoder(const std::string& model_dir, const EncoderOptions& options) {
    const std::string device = resolve_encoder_device(options.device);
    if (!fs::is_directory(model_dir)) throw InputError(model_dir, 0, "no such model directory");
    check_encoder_precision_name(options.precision);  // a bad name is an error on every device
    if (device == "cuda" || device == "cuda-emulated") {
        EncoderOptions resolved = options;
        resolved.device = device;
        return encoder::make_cuda_encoder(model_dir, resolved);
    }
    return std::make_unique<CpuEncoder>(model_dir, options);
}

std::string default_model_dir() {
    if (const char* env = std::getenv("NOVELTY_MODEL_DIR"); env && *env) return env;
    // The executable lives in <project>/build/<config>/ (or deeper, for tests): look upwards.
    std::error_code ec;
    fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    for (int up = 0; up < 5 && !dir.empty(); ++up, dir = dir.parent_path()) {
        const fs::path candidate = dir / "models" / "all-MiniLM-L6-v2";
        if (fs::exists(candidate / "config.json", ec)) return candidate.string();
        if (dir == dir.parent_path()) break;
    }
    throw UsageError("the default encoder model (all-MiniLM-L6-v2) was not found: run scripts/setup.sh, which installs "
                     "it and links it as models/all-MiniLM-L6-v2, or set NOVELTY_MODEL_DIR, or name a model directory",
                     "embedder");
}

}  // namespace novelty
