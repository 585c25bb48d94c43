// --precision on the commands that embed: `embed` writes bf16 vectors within the accuracy bar of
// f32's, and a name the CPU encoder does not offer (int8) is a usage error (exit 2) that writes
// nothing.
#include "novelty/io/npy.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

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

}  // namespace

TEST(EncoderPrecisionCli, EmbedInBf16StaysWithinTheBarAndInt8IsRefused) {
    TempDir tmp;
    const std::string model = shell_quote(novelty::test::fixture("encoder/tiny-xlmr"));
    const std::string in = shell_quote(novelty::test::fixture("import/generic.jsonl"));
    for (const std::string precision : {"f32", "bf16"}) {
        const auto r = run_cli("embed -q --in " + in + " --embedder " + model + " --device cpu --precision " + precision +
                               " --out " + shell_quote(tmp.file(precision + ".npy")));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const auto f32 = rows_of(tmp.file("f32.npy")), bf16 = rows_of(tmp.file("bf16.npy"));
    ASSERT_EQ(f32.size(), bf16.size());
    EXPECT_NE(f32, bf16);
    const std::size_t dim = 16;
    for (std::size_t r = 0; r < f32.size() / dim; ++r) {
        double dot = 0;
        for (std::size_t c = 0; c < dim; ++c) dot += double(f32[r * dim + c]) * bf16[r * dim + c];
        EXPECT_GE(dot, 0.999) << "row " << r;
    }
    const auto r = run_cli("embed -q --in " + in + " --embedder " + model + " --precision int8 --out " +
                           shell_quote(tmp.file("int8.npy")));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--precision"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("int8.npy")));
}
