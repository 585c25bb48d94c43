// The CUDA text encoder against the CPU encoder (the reference): cosine >= 0.9999 on the tiny
// XLM-RoBERTa and tiny BERT fixtures, on 1,000 real abstracts with all-MiniLM-L6-v2, long inputs
// truncated the same way, empty and one-token texts, bfloat16 weights, small memory budgets.
// Every suite skips without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "novelty/encoder/text_encoder.hpp"
#include "novelty/request/query_records.hpp"
#include "device/device.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"

namespace {

using namespace novelty;

class CudaEncoder : public ::testing::Test {
protected:
    void SetUp() override {
        if (list_devices().empty()) GTEST_SKIP() << "no CUDA device";
    }
};

/// The project directory: $NOVELTY_TEST_SOURCE_DIR when set (a copy of the tree on a GPU machine,
/// see bench/device_check.sh), else the one this binary was built from.
std::string source_dir() {
    const char* env = std::getenv("NOVELTY_TEST_SOURCE_DIR");
    return env != nullptr && *env ? env : NOVELTY_SOURCE_DIR;
}
std::string fixture(const std::string& relative) { return source_dir() + "/tests/fixtures/" + relative; }

/// all-MiniLM-L6-v2, or $NOVELTY_TEST_MINILM_DIR: a model of its shape and vocabulary (the GPU
/// machine gets one with random weights from bench/make_random_bert.py: the weights do not
/// matter for agreement between the devices).
std::string minilm_dir() {
    const char* env = std::getenv("NOVELTY_TEST_MINILM_DIR");
    return env != nullptr && *env ? env : source_dir() + "/models/all-MiniLM-L6-v2";
}

std::unique_ptr<Embedder> load(const std::string& dir, const std::string& device, const std::string& storage = "f16",
                               std::size_t memory = 0, const std::string& attention = "auto") {
    EncoderOptions options;
    options.device = device;
    options.device_storage = storage;
    options.device_memory = memory;
    options.device_attention = attention;
    return load_builtin_encoder(dir, options);
}

/// The smallest row cosine between the CPU's and the CUDA encoder's vectors of `texts`.
double min_cosine(const std::string& dir, const std::vector<std::string>& texts, const std::string& storage = "f16",
                  std::size_t memory = 0, const std::string& attention = "auto") {
    const auto cpu = load(dir, "cpu")->embed(texts);
    auto gpu_encoder = load(dir, "cuda", storage, memory, attention);
    EXPECT_EQ(gpu_encoder->device(), dev::emulation_forced() ? "cuda-emulated" : "cuda");
    const auto gpu = gpu_encoder->embed(texts);
    const std::size_t dim = gpu_encoder->dim();
    EXPECT_EQ(cpu.size(), gpu.size());
    double worst = 1.0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        double dot = 0, a = 0, b = 0;
        for (std::size_t c = 0; c < dim; ++c) {
            dot += double(cpu[i * dim + c]) * gpu[i * dim + c];
            a += double(cpu[i * dim + c]) * cpu[i * dim + c];
            b += double(gpu[i * dim + c]) * gpu[i * dim + c];
        }
        const double cosine = (a == 0 && b == 0) ? 1.0 : dot / std::sqrt(a * b);
        EXPECT_GE(cosine, 0.9999) << "text " << i << ": " << texts[i].substr(0, 80);
        worst = std::min(worst, cosine);
    }
    return worst;
}

std::vector<std::string> abstracts(std::size_t n) {
    std::vector<std::string> out;
    for (const auto& r : read_query_records(source_dir() + "/data/demo/ml_papers_demo.jsonl.gz")) {
        out.push_back(embedding_text(r.title, r.text));
        if (out.size() == n) break;
    }
    return out;
}

std::vector<std::string> edge_texts() {
    std::string long_text;
    for (int i = 0; i < 20000; ++i) long_text += "novelty " + std::to_string(i) + " ";
    return {"", "a", " ", "x", long_text, "Machine learning on graphs.", long_text.substr(0, 3000)};
}

}  // namespace

TEST_F(CudaEncoder, TinyXlmRobertaMatchesTheCpu) {
    const std::string dir = fixture("encoder/tiny-xlmr");
    std::vector<std::string> texts = abstracts(100);
    for (const auto& t : edge_texts()) texts.push_back(t);
    min_cosine(dir, texts);
}

TEST_F(CudaEncoder, TinyBertWithClsPoolingMatchesTheCpu) {
    min_cosine(fixture("encoder/tiny-bert-cls"), abstracts(200));
}

TEST_F(CudaEncoder, MiniLmOnAThousandAbstracts) {
    if (!std::filesystem::exists(minilm_dir() + "/config.json")) GTEST_SKIP() << "all-MiniLM-L6-v2 not installed";
    // The emulated device runs every kernel as a host loop: 100 abstracts keep CI's time.
    min_cosine(minilm_dir(), abstracts(dev::emulation_forced() ? 100 : 1000));
}

TEST_F(CudaEncoder, BothAttentionKernelsMatchTheCpu) {
    if (!std::filesystem::exists(minilm_dir() + "/config.json")) GTEST_SKIP() << "all-MiniLM-L6-v2 not installed";
    std::vector<std::string> texts = abstracts(dev::emulation_forced() ? 40 : 200);
    for (const auto& t : edge_texts()) texts.push_back(t);
    min_cosine(minilm_dir(), texts, "f16", 0, "tiled");  // head dimension 32
    min_cosine(minilm_dir(), texts, "f16", 0, "warp");
    // The tiny fixtures have heads of 8 dimensions: only the warp kernel applies.
    EXPECT_THROW(load(fixture("encoder/tiny-xlmr"), "cuda", "f16", 0, "tiled"), UsageError);
    EXPECT_THROW(load(fixture("encoder/tiny-xlmr"), "cuda", "f16", 0, "flash"), UsageError);
}

TEST_F(CudaEncoder, LongEmptyAndOneTokenTextsMatchTheCpu) {
    if (!std::filesystem::exists(minilm_dir() + "/config.json")) GTEST_SKIP() << "all-MiniLM-L6-v2 not installed";
    min_cosine(minilm_dir(), edge_texts());
}

TEST_F(CudaEncoder, Bfloat16WeightsAndSmallBatchesAgree) {
    const std::string dir = fixture("encoder/tiny-xlmr");
    std::vector<std::string> texts = abstracts(50);
    // bf16 keeps 8 bits of mantissa: a looser bound than float16's.
    const auto cpu = load(dir, "cpu")->embed(texts);
    const auto bf16 = load(dir, "cuda", "bf16")->embed(texts);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        double dot = 0;
        for (std::size_t c = 0; c < 16; ++c) dot += double(cpu[i * 16 + c]) * bf16[i * 16 + c];
        EXPECT_GE(dot, 0.999) << i;
    }
    // A budget of about 9,000 tokens: every batch holds one or two long texts.
    min_cosine(dir, texts, "f16", std::size_t{9000} * (32 * 16 + 6 * 32 + 40));
}

TEST_F(CudaEncoder, TooSmallAMemoryBudgetIsAClearError) {
    EXPECT_THROW(load(fixture("encoder/tiny-xlmr"), "cuda", "f16", 4096), UsageError);
    EXPECT_THROW(load(fixture("encoder/tiny-xlmr"), "cuda", "f32"), UsageError);
}
