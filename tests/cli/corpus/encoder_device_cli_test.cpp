// --device on the commands that embed: the XLM-RoBERTa fixture model through `corpus embed`
// (manifest records encoder and device) and `embed`; cuda refused clearly where it cannot run;
// the shared --device of a command that also searches reaches the encoder.
#include "novelty/io/npy.hpp"
#include "novelty/search/devices.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

/// The message `--device cuda` must give on this machine, or "" when CUDA can run here.
std::string cuda_refusal() {
    if (!novelty::cuda_compiled()) return "CUDA was not compiled in";
    if (novelty::list_devices().empty()) return "no CUDA device is available";
    return "";
}

}  // namespace

TEST(EncoderDeviceCli, XlmRobertaCorpusEmbedRecordsEncoderAndDevice) {
    TempDir tmp;
    const std::string model = novelty::test::fixture("encoder/tiny-xlmr");
    const std::string dir = tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(novelty::test::fixture("import/generic.jsonl")) + " --out " +
                      shell_quote(dir)).exit_code, 0);
    auto r = run_cli("corpus embed -q " + shell_quote(dir) + " --embedder " + shell_quote(model) + " --device cpu");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("with tiny-xlmr (dim 16, cls pooling)"), std::string::npos) << r.out;
    std::ifstream in(dir + "/manifest.json");
    const auto manifest = nlohmann::json::parse(in);
    EXPECT_EQ(manifest["embedder"]["name"], "tiny-xlmr");
    EXPECT_EQ(manifest["embedder"]["device"], "cpu");
    EXPECT_EQ(manifest["embedder"]["pooling"], "cls");

    novelty::test::write_file(tmp.file("q.jsonl"), "{\"id\": \"q\", \"title\": \"Große Straße\", \"text\": \"机器学习 🙂\"}\n");
    r = run_cli("embed -q --in " + shell_quote(tmp.file("q.jsonl")) + " --embedder " + shell_quote(model) +
                " --device auto --out " + shell_quote(tmp.file("q.npy")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(novelty::NpyMatrix::open(tmp.file("q.npy")).cols(), 16u);
    // search has its own --device (the backend's); the same value chooses the encoder's device.
    r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                " --embedder " + shell_quote(model) + " --device cpu --k 1 --out " + shell_quote(tmp.file("out.jsonl")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(novelty::test::json_lines(tmp.file("out.jsonl")).size(), 1u);
    const std::string refusal = cuda_refusal();
    if (!refusal.empty()) {
        r = run_cli("search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                    " --embedder " + shell_quote(model) + " --device cuda --k 1");
        EXPECT_EQ(r.exit_code, 2);
        EXPECT_NE(r.err.find(refusal), std::string::npos) << r.err;
    }
}

TEST(EncoderDeviceCli, CudaIsRefusedClearlyWhereItCannotRun) {
    const std::string refusal = cuda_refusal();
    if (refusal.empty()) GTEST_SKIP() << "CUDA can run here";
    TempDir tmp;
    const std::string model = novelty::test::fixture("encoder/tiny-xlmr");
    novelty::test::write_file(tmp.file("q.jsonl"), "{\"id\": \"q\", \"title\": \"x\"}\n");
    auto r = run_cli("embed --in " + shell_quote(tmp.file("q.jsonl")) + " --embedder " + shell_quote(model) +
                     " --device cuda --out " + shell_quote(tmp.file("q.npy")));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(refusal), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("q.npy")));
    r = run_cli("embed --in " + shell_quote(tmp.file("q.jsonl")) + " --embedder " + shell_quote(model) +
                " --device tpu --out " + shell_quote(tmp.file("q.npy")));
    EXPECT_EQ(r.exit_code, 2);
}
