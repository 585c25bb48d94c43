// --precision on the commands that embed: `embed` writes bf16 and int8 vectors within the accuracy
// bar of f32's, and a name the CPU encoder does not offer (int4) is a usage error (exit 2) that
// writes nothing; the manifest, `corpus info` and the score provenance record the precision (the
// corpus's and, when `score` embeds the ideas, theirs), and an add at another precision records "mixed".
#include "json_lines.hpp"
#include "novelty/io/npy.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

std::vector<float> rows_of(const std::string& npy) {
    const auto m = novelty::NpyMatrix::open(npy);
    std::vector<float> out(m.rows() * m.cols());
    for (std::size_t r = 0; r < m.rows(); ++r) m.row_as_f32(r, out.data() + r * m.cols());
    return out;
}

nlohmann::json manifest_of(const std::string& dir) {
    std::ifstream in(dir + "/manifest.json");
    return nlohmann::json::parse(in);
}

}  // namespace

TEST(EncoderPrecisionCli, EmbedInBf16AndInt8StaysWithinTheBarAndInt4IsRefused) {
    TempDir tmp;
    const std::string model = shell_quote(novelty::test::fixture("encoder/tiny-xlmr"));
    const std::string in = shell_quote(novelty::test::fixture("import/generic.jsonl"));
    for (const std::string precision : {"f32", "bf16", "int8"}) {
        const auto r = run_cli("embed -q --in " + in + " --embedder " + model + " --device cpu --precision " + precision +
                               " --out " + shell_quote(tmp.file(precision + ".npy")));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const auto f32 = rows_of(tmp.file("f32.npy"));
    for (const std::string precision : {"bf16", "int8"}) {
        const auto narrow = rows_of(tmp.file(precision + ".npy"));
        ASSERT_EQ(f32.size(), narrow.size());
        EXPECT_NE(f32, narrow) << precision;
        const std::size_t dim = 16;
        for (std::size_t r = 0; r < f32.size() / dim; ++r) {
            double dot = 0;
            for (std::size_t c = 0; c < dim; ++c) dot += double(f32[r * dim + c]) * narrow[r * dim + c];
            EXPECT_GE(dot, 0.999) << precision << " row " << r;
        }
    }
    const auto r = run_cli("embed -q --in " + in + " --embedder " + model + " --precision int4 --out " +
                           shell_quote(tmp.file("int4.npy")));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--precision"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("int4.npy")));
}

TEST(EncoderPrecisionCli, ManifestAndProvenanceRecordThePrecisionAndAnAddAtAnotherIsMixed) {
    TempDir tmp;
    const std::string model = shell_quote(novelty::test::fixture("encoder/tiny-xlmr"));
    const std::string dir = tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(novelty::test::fixture("import/generic.jsonl")) + " --out " +
                      shell_quote(dir)).exit_code, 0);
    auto r = run_cli("corpus embed -q " + shell_quote(dir) + " --embedder " + model + " --device cpu --precision bf16");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json embedded = manifest_of(dir);
    EXPECT_EQ(embedded["embedder"]["precision"], "bf16");
    r = run_cli("corpus info " + shell_quote(dir));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("tiny-xlmr (dim 16, cls pooling, bf16)"), std::string::npos) << r.out;

    novelty::test::write_file(tmp.file("ideas.jsonl"), "{\"id\": \"i\", \"title\": \"Sparse attention\", "
                                                       "\"text\": \"Patterns for long documents.\"}\n");
    // Ideas embedded here at another precision than the corpus: the provenance says both.
    r = run_cli("score -q --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                " --embedder " + model + " --device cpu --precision int8 --p 2 --q 1 --out " + shell_quote(tmp.file("s.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = novelty::test::json_lines(tmp.file("s.jsonl"));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0]["provenance"]["embedder_precision"], "bf16");
    EXPECT_EQ(lines[0]["provenance"]["ideas_embedder_precision"], "int8");
    // Ideas given as vectors were embedded by no encoder of this run: no ideas precision.
    r = run_cli("embed -q --in " + shell_quote(tmp.file("ideas.jsonl")) + " --embedder " + model +
                " --device cpu --out " + shell_quote(tmp.file("ideas.npy")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli("score -q --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                " --vectors " + shell_quote(tmp.file("ideas.npy")) + " --p 2 --q 1 --out " + shell_quote(tmp.file("v.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto given = novelty::test::json_lines(tmp.file("v.jsonl"));
    ASSERT_EQ(given.size(), 1u);
    EXPECT_FALSE(given[0]["provenance"].contains("ideas_embedder_precision")) << given[0]["provenance"];

    // An add embedded at the corpus's precision keeps it; one at another records "mixed".
    novelty::test::write_file(tmp.file("a.jsonl"), "{\"id\": \"a1\", \"title\": \"Added paper\", "
                                                   "\"abstract\": \"One more.\", \"year\": 2022}\n");
    novelty::test::write_file(tmp.file("b.jsonl"), "{\"id\": \"b1\", \"title\": \"Another added paper\", "
                                                   "\"abstract\": \"And one more.\", \"year\": 2023}\n");
    r = run_cli("corpus add -q " + shell_quote(dir) + " --in " + shell_quote(tmp.file("a.jsonl")) + " --embedder " + model +
                " --device cpu --precision bf16");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(manifest_of(dir)["embedder"]["precision"], "bf16");
    r = run_cli("corpus add -q " + shell_quote(dir) + " --in " + shell_quote(tmp.file("b.jsonl")) + " --embedder " + model +
                " --device cpu --precision f32");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto manifest = manifest_of(dir);
    EXPECT_EQ(manifest["embedder"]["precision"], "mixed");
    EXPECT_EQ(manifest["count"].get<std::size_t>(), embedded["count"].get<std::size_t>() + 2);
}
