// The built-in encoder against sentence-transformers: all-MiniLM-L6-v2 (mean pooling) and a tiny
// float16 BERT with CLS pooling, on 50 real abstracts whose reference embeddings were made once
// by tests/fixtures/encoder/make_embedding_fixtures.py.
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/request/query_records.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

using namespace novelty;
namespace fs = std::filesystem;

namespace {

std::string minilm_dir() { return std::string(NOVELTY_SOURCE_DIR) + "/models/all-MiniLM-L6-v2"; }

std::vector<std::string> fixture_texts() {
    std::vector<std::string> texts;
    for (const auto& r : read_query_records(test::fixture("encoder/abstracts.jsonl")))
        texts.push_back(embedding_text(r.title, r.text));
    return texts;
}

// Cosine of row i of `ours` (n x dim) with row i of the reference .npy.
std::vector<double> cosines(const std::vector<float>& ours, const std::string& reference_npy) {
    const NpyMatrix ref = NpyMatrix::open(reference_npy);
    const std::size_t dim = ref.cols();
    EXPECT_EQ(ours.size(), ref.rows() * dim);
    std::vector<double> out;
    std::vector<float> row(dim);
    for (std::size_t i = 0; i < ref.rows(); ++i) {
        ref.row_as_f32(i, row.data());
        double dot = 0, a = 0, b = 0;
        for (std::size_t c = 0; c < dim; ++c) {
            dot += double(ours[i * dim + c]) * row[c];
            a += double(ours[i * dim + c]) * ours[i * dim + c];
            b += double(row[c]) * row[c];
        }
        out.push_back(dot / std::sqrt(a * b));
    }
    return out;
}

}  // namespace

TEST(Encoder, MiniLmMatchesSentenceTransformers) {
    if (!fs::exists(minilm_dir() + "/config.json"))
        GTEST_SKIP() << "all-MiniLM-L6-v2 is not installed at " << minilm_dir() << " (run scripts/setup.sh)";
    auto encoder = load_builtin_encoder(minilm_dir());
    EXPECT_EQ(encoder->name(), "all-MiniLM-L6-v2");
    EXPECT_EQ(encoder->dim(), 384u);
    EXPECT_EQ(encoder->pooling(), "mean");
    const auto texts = fixture_texts();
    ASSERT_EQ(texts.size(), 50u);
    const std::vector<float> vectors = encoder->embed(texts);
    double worst = 1.0;
    for (double c : cosines(vectors, test::fixture("encoder/minilm_reference.npy"))) worst = std::min(worst, c);
    EXPECT_GE(worst, 0.999);
    RecordProperty("worst_cosine", std::to_string(worst));
    // Rows are unit length, and one text alone embeds as it does in a batch.
    for (std::size_t i = 0; i < texts.size(); ++i) {
        double norm = 0;
        for (std::size_t c = 0; c < 384; ++c) norm += double(vectors[i * 384 + c]) * vectors[i * 384 + c];
        EXPECT_NEAR(norm, 1.0, 1e-5);
    }
    const std::vector<float> single = encoder->embed({texts[7]});
    for (std::size_t c = 0; c < 384; ++c) EXPECT_NEAR(single[c], vectors[7 * 384 + c], 1e-5);
}

TEST(Encoder, ClsPoolingWithHalfPrecisionWeights) {
    auto encoder = load_builtin_encoder(test::fixture("encoder/tiny-bert-cls"));
    EXPECT_EQ(encoder->pooling(), "cls");
    EXPECT_EQ(encoder->dim(), 16u);
    const std::vector<float> vectors = encoder->embed(fixture_texts());
    for (double c : cosines(vectors, test::fixture("encoder/tiny_cls_reference.npy"))) EXPECT_GE(c, 0.999);
}

TEST(Encoder, EmbeddingTextJoinsTitleAndText) {
    EXPECT_EQ(embedding_text("Title", "Body text."), "Title\n\nBody text.");
    EXPECT_EQ(embedding_text("  Title \n", ""), "Title");
    EXPECT_EQ(embedding_text("", " Body "), "Body");
    EXPECT_EQ(embedding_text("", ""), "");
}

TEST(Encoder, EmptyAndLongTextsStillEmbed) {
    auto encoder = load_builtin_encoder(test::fixture("encoder/tiny-bert-cls"));
    std::string long_text;
    for (int i = 0; i < 3000; ++i) long_text += "word ";
    const auto vectors = encoder->embed({"", long_text, "x"});
    ASSERT_EQ(vectors.size(), 3u * 16u);
    for (float v : vectors) EXPECT_TRUE(std::isfinite(v));
}

TEST(Encoder, BadModelDirectoriesNameTheProblem) {
    test::TempDir tmp;
    EXPECT_THROW(load_builtin_encoder(tmp.file("missing")), InputError);
    fs::copy(test::fixture("encoder/tiny-bert-cls"), tmp.file("m"), fs::copy_options::recursive);
    std::string config = test::read_file(tmp.file("m/config.json"));
    config.replace(config.find("\"gelu\""), 6, "\"relu\"");
    test::write_file(tmp.file("m/config.json"), config);
    try {
        load_builtin_encoder(tmp.file("m"));
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("hidden_act 'relu' is not supported"), std::string::npos) << e.what();
    }
    fs::remove(tmp.file("m/model.safetensors"));
    test::write_file(tmp.file("m/config.json"), test::read_file(test::fixture("encoder/tiny-bert-cls/config.json")));
    EXPECT_THROW(load_builtin_encoder(tmp.file("m")), InputError);
}
