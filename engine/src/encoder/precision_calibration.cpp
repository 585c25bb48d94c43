#include "encoder/precision_calibration.hpp"

#include "encoder/bert_model.hpp"
#include "novelty/util/cpu_path.hpp"
#include "util/parallel_for.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <memory>

namespace novelty::encoder {

namespace {

// The model at `precision`, as the CPU encoder sets it up (builtin_encoder.cpp).
std::unique_ptr<BertModel> model_at(const std::string& model_dir, const std::string& precision) {
    auto model = std::make_unique<BertModel>(BertModel::load(model_dir));
    if (precision == "bf16")
        model->set_linear_precision(bf16_kernel_available() ? LinearPrecision::bf16_avx512 : LinearPrecision::bf16_float32);
    if (precision == "int8")
        model->set_linear_precision(int8_kernel_available() ? LinearPrecision::int8_kernel : LinearPrecision::int8_float32,
                                    int8_linear_layers);
    return model;
}

// One thread's batch: 4 sequences of 96, 160, 224 and 256 tokens, [CLS]-like first and
// [SEP]-like last ids, ids spread over the vocabulary in between (never past vocab_size).
std::vector<std::vector<std::int32_t>> calibration_batch(const BertConfig& config) {
    std::vector<std::vector<std::int32_t>> seqs;
    const std::size_t vocab = std::max<std::size_t>(config.vocab_size, 4);
    for (std::size_t len : {96u, 160u, 224u, 256u}) {
        len = std::min(len, config.max_tokens());
        std::vector<std::int32_t> ids(len);
        for (std::size_t t = 0; t < len; ++t) ids[t] = static_cast<std::int32_t>(3 + (t * 7919 + len) % (vocab - 3));
        ids.front() = static_cast<std::int32_t>(std::min<std::size_t>(2, vocab - 1));
        seqs.push_back(std::move(ids));
    }
    return seqs;
}

// Seconds `threads` threads take to run `model` on the batch once each.
double time_round(const BertModel& model, const std::vector<std::vector<std::int32_t>>& batch, std::size_t threads) {
    std::vector<const std::vector<std::int32_t>*> seqs;
    for (const auto& s : batch) seqs.push_back(&s);
    const auto start = std::chrono::steady_clock::now();
    parallel_for_blocks(threads, threads, [&](std::size_t) {
        std::vector<float> hidden;
        model.forward(seqs, hidden);
    });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

PrecisionTimes time_precisions(const std::string& model_dir, const std::vector<std::string>& precisions,
                               std::size_t threads, std::size_t rounds) {
    threads = resolve_threads(threads);
    std::vector<std::unique_ptr<BertModel>> models;
    for (const std::string& p : precisions) models.push_back(model_at(model_dir, p));
    if (models.empty()) return {};
    const auto batch = calibration_batch(models.front()->config());
    openblas_set_num_threads(1);
    PrecisionTimes best;
    for (std::size_t round = 0; round <= rounds; ++round)
        for (std::size_t i = 0; i < precisions.size(); ++i) {
            const double seconds = time_round(*models[i], batch, threads);
            if (round == 0) continue;  // warm-up: page faults, first-touch of the scratch
            auto [it, inserted] = best.emplace(precisions[i], seconds);
            if (!inserted) it->second = std::min(it->second, seconds);
        }
    return best;
}

std::string fastest_keeping_bar(const PrecisionTimes& times, const std::vector<std::string>& keeping_bar,
                                double margin) {
    const auto f32 = times.find("f32");
    if (f32 == times.end()) return "f32";  // nothing to compare with: the reference
    std::string chosen = "f32";
    const double f32_seconds = f32->second;
    double chosen_seconds = f32_seconds;
    for (const std::string& p : keeping_bar) {
        const auto it = times.find(p);
        if (p == "f32" || it == times.end()) continue;
        if (it->second * (1.0 + margin) <= f32_seconds && it->second < chosen_seconds) {
            chosen = p;
            chosen_seconds = it->second;
        }
    }
    return chosen;
}

}  // namespace novelty::encoder
