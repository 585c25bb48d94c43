// novelty search and novelty score on the emulated CUDA device (--device cuda-emulated), end to
// end: a device whose memory (NOVELTY_EMULATED_DEVICE_MIB) cannot hold the corpus streams it in
// chunks, and with float32 device storage the neighbours and similarities are the CPU backend's
// bit for bit (the emulator's tiles are the engine's fixed-order dot products); scores equal the
// CPU's and provenance names the emulated backend.
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "json_lines.hpp"
#include "cli_corpora.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

TEST(EmulatedDeviceCli, ASmallDeviceStreamsTheCorpusAndAnswersAsTheCpu) {
    TempDir tmp;
    const std::string corpus = novelty::test::random_corpus(tmp, 200000, 64, false);  // 51 MB of float32 rows
    std::string queries;
    for (int i = 0; i < 30; ++i)
        queries += "{\"id\": \"p" + std::to_string(i * 6661) + "\"" + (i % 2 ? ", \"date\": \"" + std::to_string(2003 + i % 15) + "\"" : "") + "}\n";
    novelty::test::write_file(tmp.file("q.jsonl"), queries);
    const std::string args = "search --corpus " + shell_quote(corpus) + " --queries " + shell_quote(tmp.file("q.jsonl")) + " --k 25 --out ";
    const auto cpu = run_cli(args + shell_quote(tmp.file("cpu.jsonl")) + " --device cpu -q");
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    const std::string profile = tmp.file("profile.jsonl");
    // 80 MiB: a budget of 90% cannot hold the corpus beside the work buffers, but holds two chunks
    // of one corpus tile (65,536 rows) each.
    ::setenv("NOVELTY_EMULATED_DEVICE_MIB", "80", 1);
    ::setenv("NOVELTY_CUDA_PROFILE", profile.c_str(), 1);
    const auto emulated = run_cli(args + shell_quote(tmp.file("emu.jsonl")) + " --device cuda-emulated --device-storage f32");
    ::unsetenv("NOVELTY_CUDA_PROFILE");
    ::unsetenv("NOVELTY_EMULATED_DEVICE_MIB");
    ASSERT_EQ(emulated.exit_code, 0) << emulated.err;
    EXPECT_NE(emulated.err.find("emulated CUDA device"), std::string::npos) << emulated.err;
    EXPECT_EQ(novelty::test::read_file(tmp.file("emu.jsonl")), novelty::test::read_file(tmp.file("cpu.jsonl")));
    std::ifstream in(profile);
    std::string line;
    std::getline(in, line);
    EXPECT_NE(line.find("\"resident\": false"), std::string::npos) << line;
    EXPECT_NE(line.find("\"chunk_upload\""), std::string::npos) << line;
    // A device too small for two chunks beside the work buffers says what to give.
    ::setenv("NOVELTY_EMULATED_DEVICE_MIB", "1", 1);
    const auto tiny = run_cli(args + shell_quote(tmp.file("tiny.jsonl")) + " --device cuda-emulated --device-storage f32 -q");
    ::unsetenv("NOVELTY_EMULATED_DEVICE_MIB");
    EXPECT_NE(tiny.exit_code, 0);
    EXPECT_NE(tiny.err.find("MiB or more"), std::string::npos) << tiny.err;
}

TEST(EmulatedDeviceCli, ScoresEqualTheCpusAndProvenanceNamesTheEmulator) {
    TempDir tmp;
    const std::string corpus = novelty::test::random_corpus(tmp, 3000, 32, false);
    std::string ideas;
    for (int i = 0; i < 12; ++i) ideas += "{\"id\": \"p" + std::to_string(i * 233) + "\", \"date\": \"" + std::to_string(2008 + i) + "\"}\n";
    novelty::test::write_file(tmp.file("ideas.jsonl"), ideas);
    const std::string args = "score --corpus " + shell_quote(corpus) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                             " --p 20 --q 10 -q --out ";
    ASSERT_EQ(run_cli(args + shell_quote(tmp.file("cpu.jsonl")) + " --device cpu").exit_code, 0);
    const std::string copy = tmp.file("copy");  // its own density store
    ASSERT_EQ(std::system(("cp -r " + shell_quote(corpus) + " " + shell_quote(copy) + " && rm -rf " + shell_quote(copy + "/cache")).c_str()), 0);
    const auto emulated = run_cli("score --corpus " + shell_quote(copy) + " --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                                  " --p 20 --q 10 -q --device cuda-emulated --device-storage f32 --out " + shell_quote(tmp.file("emu.jsonl")));
    ASSERT_EQ(emulated.exit_code, 0) << emulated.err;
    const auto want = novelty::test::json_lines(tmp.file("cpu.jsonl"));
    const auto got = novelty::test::json_lines(tmp.file("emu.jsonl"));
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i]["scores"], want[i]["scores"]) << i;
        EXPECT_EQ(got[i]["neighbors"], want[i]["neighbors"]) << i;
        EXPECT_EQ(got[i]["provenance"]["backend"], "cuda-emu-f32") << i;
    }
}
