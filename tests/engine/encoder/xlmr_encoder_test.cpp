// The built-in encoder on an XLM-RoBERTa model against transformers: a tiny random
// XLM-RoBERTa (float16 weights, 8,194 positions, SentencePiece unigram tokenizer, CLS pooling as
// BGE-M3) and its reference embeddings, written once by
// tests/fixtures/encoder/make_xlmr_fixtures.py. Also RoBERTa position ids and the device choice.
#include "encoder/bert_model.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace novelty;

namespace {

std::string tiny_dir() { return test::fixture("encoder/tiny-xlmr"); }

std::vector<std::string> reference_texts() {
    std::ifstream in(test::fixture("encoder/xlmr_texts.jsonl"));
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
    return out;
}

double cosine(const float* a, const float* b, std::size_t dim) {
    double dot = 0, na = 0, nb = 0;
    for (std::size_t c = 0; c < dim; ++c) {
        dot += double(a[c]) * b[c];
        na += double(a[c]) * a[c];
        nb += double(b[c]) * b[c];
    }
    return dot / std::sqrt(na * nb);
}

}  // namespace

TEST(XlmrEncoder, CpuMatchesTransformersOnTheFixtures) {
    auto encoder = load_builtin_encoder(tiny_dir());
    EXPECT_EQ(encoder->name(), "tiny-xlmr");
    EXPECT_EQ(encoder->dim(), 16u);
    EXPECT_EQ(encoder->pooling(), "cls");
    EXPECT_EQ(encoder->device(), "cpu");
    const auto texts = reference_texts();
    ASSERT_EQ(texts.size(), 30u);
    const std::vector<float> ours = encoder->embed(texts);
    const NpyMatrix ref = NpyMatrix::open(test::fixture("encoder/xlmr_reference.npy"));
    ASSERT_EQ(ref.rows(), texts.size());
    ASSERT_EQ(ref.cols(), 16u);
    std::vector<float> row(16);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        ref.row_as_f32(i, row.data());
        EXPECT_GE(cosine(ours.data() + i * 16, row.data(), 16), 0.9999) << "text " << i << ": " << texts[i].substr(0, 60);
    }
}

TEST(XlmrEncoder, SameVectorsWhateverTheGroupingAndThreads) {
    const auto texts = reference_texts();
    EncoderOptions one;
    one.threads = 1;
    one.tokens_per_group = 1;  // every text alone
    EncoderOptions two;
    two.threads = 2;
    two.tokens_per_group = 100000;
    const auto a = load_builtin_encoder(tiny_dir(), one)->embed(texts);
    const auto b = load_builtin_encoder(tiny_dir(), two)->embed(texts);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_GE(cosine(a.data() + i * 16, b.data() + i * 16, 16), 0.999999);
}

TEST(XlmrEncoder, RobertaPositionsSkipPaddingTokens) {
    encoder::BertConfig c;
    c.max_positions = 10;
    EXPECT_EQ(encoder::position_ids(c, {0, 5, 2}), (std::vector<std::size_t>{0, 1, 2}));
    c.roberta_positions = true;
    c.padding_idx = 1;
    EXPECT_EQ(c.max_tokens(), 8u);
    // A padding id written in the text sits at padding_idx and does not advance the count.
    EXPECT_EQ(encoder::position_ids(c, {0, 7, 1, 9, 2}), (std::vector<std::size_t>{2, 3, 1, 4, 5}));
}

TEST(XlmrEncoder, RefusesUnknownModelTypesAndDevices) {
    test::TempDir dir;
    const std::string d = dir.path().string();
    for (const char* name : {"config.json", "model.safetensors", "tokenizer.json", "sentence_bert_config.json"})
        std::filesystem::copy_file(tiny_dir() + "/" + name, d + "/" + name);
    std::ifstream in(d + "/config.json");
    nlohmann::json config = nlohmann::json::parse(in);
    in.close();
    config["model_type"] = "deberta-v2";
    test::write_file(d + "/config.json", config.dump());
    try {
        load_builtin_encoder(d);
        ADD_FAILURE() << "a deberta-v2 model was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("model_type 'deberta-v2'"), std::string::npos) << e.what();
    }
    EncoderOptions bad;
    bad.device = "tpu";
    EXPECT_THROW(load_builtin_encoder(tiny_dir(), bad), UsageError);
    EncoderOptions cuda;
    cuda.device = "cuda";
    if (!cuda_compiled()) {
        try {
            load_builtin_encoder(tiny_dir(), cuda);
            ADD_FAILURE() << "cuda accepted by a CPU-only build";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("CUDA was not compiled in"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(resolve_encoder_device("cpu"), "cpu");
    EXPECT_EQ(resolve_encoder_device("auto"), cuda_compiled() && !list_devices().empty() ? "cuda" : "cpu");
}

TEST(XlmrEncoder, PytorchBinWithoutSafetensorsSaysHowToConvert) {
    test::TempDir dir;
    const std::string d = dir.path().string();
    for (const char* name : {"config.json", "tokenizer.json"}) std::filesystem::copy_file(tiny_dir() + "/" + name, d + "/" + name);
    test::write_file(d + "/pytorch_model.bin", "not read");
    try {
        load_builtin_encoder(d);
        ADD_FAILURE() << "accepted without model.safetensors";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("model.safetensors"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("safe_serialization=True"), std::string::npos) << e.what();
    }
}

TEST(XlmrEncoder, ModelDirectoryWithoutTokenizerIsRefused) {
    test::TempDir dir;
    const std::string d = dir.path().string();
    for (const char* name : {"config.json", "model.safetensors"})
        std::filesystem::copy_file(tiny_dir() + "/" + name, d + "/" + name);
    try {
        load_builtin_encoder(d);
        ADD_FAILURE() << "accepted without a tokenizer";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("no tokenizer"), std::string::npos) << e.what();
    }
}
