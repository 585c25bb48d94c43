// The `novelty` executable: help texts, exit codes and the corpus commands end to end.
#include "novelty/io/npy.hpp"
#include "novelty/util/cpu_path.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

using novelty::test::fixture;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

TEST(Cli, HelpExplainsEveryCommandAndFlag) {
    const auto top = run_cli("--help");
    EXPECT_EQ(top.exit_code, 0);
    EXPECT_NE(top.out.find("corpus"), std::string::npos);
    EXPECT_NE(top.out.find("info"), std::string::npos);
    struct Case {
        const char* command;
        std::vector<const char*> flags;
    };
    for (const Case& c : {Case{"corpus import", {"--in", "--format", "--field", "--out", "--overwrite", "--skip-invalid", "--quiet"}},
                          Case{"corpus add-vectors", {"--vectors", "--ids", "--dtype", "--embedder", "--pooling"}},
                          Case{"corpus info", {"--json", "--verify"}},
                          Case{"info", {"--json"}}}) {
        const auto help = run_cli(std::string(c.command) + " --help");
        EXPECT_EQ(help.exit_code, 0) << c.command;
        for (const char* flag : c.flags) EXPECT_NE(help.out.find(flag), std::string::npos) << c.command << " " << flag;
    }
}

TEST(Cli, UsageErrorsExitWithTwo) {
    EXPECT_EQ(run_cli("").exit_code, 2);
    EXPECT_EQ(run_cli("corpus import --in x.jsonl").exit_code, 2);  // no --out
    EXPECT_EQ(run_cli("corpus import --in x.jsonl --out y --format bibtex").exit_code, 2);
    EXPECT_EQ(run_cli("no-such-command").exit_code, 2);
}

TEST(Cli, ImportInfoAndAddVectors) {
    TempDir tmp;
    const std::string corpus = tmp.file("corpus");
    const auto import = run_cli("corpus import --format paperlists openalex --field ml biomed --in " +
                                shell_quote(fixture("import/paperlists.jsonl.gz")) + " " +
                                shell_quote(fixture("import/openalex.jsonl")) + " --out " + shell_quote(corpus));
    ASSERT_EQ(import.exit_code, 0) << import.err;
    EXPECT_NE(import.out.find("imported 7 papers"), std::string::npos) << import.out;
    EXPECT_NE(import.err.find("identical copy"), std::string::npos) << import.err;

    const auto info = run_cli("corpus info " + shell_quote(corpus));
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE(info.out.find("papers      7"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("1987 .. 2018 (7 dated"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("ml 4, biomed 3"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("vectors     none"), std::string::npos) << info.out;

    // 7 x 3 vectors, stored as float16.
    std::vector<float> v(7 * 3);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 5) + 1.0f;
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 7, 3, v.data());
    const auto add = run_cli("corpus add-vectors " + shell_quote(corpus) + " --vectors " + shell_quote(tmp.file("v.npy")) +
                             " --dtype f16 --embedder demo-model --pooling cls --order corpus");
    ASSERT_EQ(add.exit_code, 0) << add.err;

    const auto json = run_cli("corpus info --json --verify " + shell_quote(corpus));
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["count"], 7);
    EXPECT_EQ(j["dim"], 3);
    EXPECT_EQ(j["dtype"], "f16");
    EXPECT_EQ(j["embedder"]["name"], "demo-model");
    EXPECT_EQ(j["embedder"]["pooling"], "cls");
    EXPECT_EQ(j["verified"]["papers.sqlite"], true);
    EXPECT_EQ(j["verified"]["vectors.npy"], true);
    EXPECT_EQ(j["dates"]["min"], "1987");
    EXPECT_EQ(j["sources"].size(), 2u);
    EXPECT_EQ(j["duplicates_dropped"], 1);

    // Tampering is caught when the corpus is opened (before --verify's deep check), naming the file.
    novelty::write_npy(corpus + "/vectors.npy", novelty::DType::f16, 7, 3,
                       std::vector<std::uint16_t>(21, 0x3C00).data());
    const auto tampered = run_cli("corpus info --verify " + shell_quote(corpus));
    EXPECT_EQ(tampered.exit_code, 4);
    EXPECT_NE(tampered.err.find("vectors.npy is not the file manifest.json describes"), std::string::npos) << tampered.err;
}

TEST(Cli, InputAndCorpusErrorsHaveTheirExitCodes) {
    TempDir tmp;
    const auto bad = run_cli("corpus import --in " + shell_quote(fixture("import/bad_date.jsonl")) + " --out " +
                             shell_quote(tmp.file("c")));
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_NE(bad.err.find("bad_date.jsonl:2: unparseable date '2021-02-30'"), std::string::npos) << bad.err;
    const auto missing = run_cli("corpus info " + shell_quote(tmp.file("nothing-here")));
    EXPECT_EQ(missing.exit_code, 4);
    EXPECT_NE(missing.err.find("nothing-here"), std::string::npos) << missing.err;
    const auto no_input = run_cli("corpus import --in " + shell_quote(tmp.file("absent.jsonl")) + " --out " +
                                  shell_quote(tmp.file("c")));
    EXPECT_EQ(no_input.exit_code, 3);
    EXPECT_NE(no_input.err.find("absent.jsonl: no such file"), std::string::npos) << no_input.err;
}

TEST(Cli, InfoReportsTheBuild) {
    const auto info = run_cli("info --json");
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const auto j = nlohmann::json::parse(info.out);
#if defined(NOVELTY_WITH_CUDA)
    EXPECT_TRUE(j["cuda_compiled"].get<bool>());
#else
    EXPECT_FALSE(j["cuda_compiled"].get<bool>());
    EXPECT_NE(run_cli("info").out.find("not compiled in"), std::string::npos);
#endif
}

// `novelty info` names the CPU kernels' path; NOVELTY_CPU_PATH forces a lower one, and a name it
// does not know, or a path above this CPU's, is refused naming the variable.
TEST(Cli, InfoNamesTheCpuPathAndTheSwitchForcesIt) {
    const char* set = std::getenv("NOVELTY_CPU_PATH");
    const std::string saved = set ? set : "";
    unsetenv("NOVELTY_CPU_PATH");
    const auto info = run_cli("info --json");
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const auto j = nlohmann::json::parse(info.out);
    using novelty::CpuPath;
    const CpuPath best = novelty::best_cpu_path(novelty::cpu_features());
    EXPECT_EQ(j["cpu_path"].get<std::string>(), novelty::cpu_path_name(best));
    EXPECT_NE(run_cli("info").out.find(std::string("cpu path    ") + novelty::cpu_path_name(best)), std::string::npos);
    setenv("NOVELTY_CPU_PATH", "f32", 1);
    const auto forced = nlohmann::json::parse(run_cli("info --json").out);
    EXPECT_EQ(forced["cpu_path"].get<std::string>(), "f32");
    EXPECT_NE(forced["cpu_path_reason"].get<std::string>().find("NOVELTY_CPU_PATH"), std::string::npos);
    setenv("NOVELTY_CPU_PATH", "sse9", 1);
    const auto unknown = run_cli("info");
    EXPECT_NE(unknown.exit_code, 0);
    EXPECT_NE(unknown.err.find("NOVELTY_CPU_PATH=sse9"), std::string::npos) << unknown.err;
    if (best < CpuPath::amx) {
        setenv("NOVELTY_CPU_PATH", "amx", 1);
        const auto above = run_cli("info");
        EXPECT_NE(above.exit_code, 0);
        EXPECT_NE(above.err.find("this CPU does not run"), std::string::npos) << above.err;
    }
    if (set) setenv("NOVELTY_CPU_PATH", saved.c_str(), 1);
    else unsetenv("NOVELTY_CPU_PATH");
}

// `novelty info` says what --precision auto resolves to for the default model and why: the pin
// of NOVELTY_AUTO_PRECISION as the tests set it, or, unpinned with a model whose accuracy bar was
// never measured, f32 without a calibration.
TEST(Cli, InfoSaysWhatPrecisionAutoChoseAndWhy) {
    const char* pin = std::getenv("NOVELTY_AUTO_PRECISION");
    const std::string saved = pin ? pin : "";
    setenv("NOVELTY_AUTO_PRECISION", "bf16", 1);
    const auto pinned = run_cli("info --json");
    ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
    const auto j = nlohmann::json::parse(pinned.out)["encoder_precision"];
    EXPECT_EQ(j["precision"], "bf16");
    EXPECT_NE(j["reason"].get<std::string>().find("NOVELTY_AUTO_PRECISION"), std::string::npos);
    EXPECT_NE(run_cli("info").out.find("--precision auto is bf16"), std::string::npos);
    unsetenv("NOVELTY_AUTO_PRECISION");
    const novelty::test::TempDir cache;
    const char* model = std::getenv("NOVELTY_MODEL_DIR");
    const std::string saved_model = model ? model : "";
    setenv("NOVELTY_MODEL_DIR", novelty::test::fixture("encoder/tiny-bert-cls").c_str(), 1);
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const std::string saved_xdg = xdg ? xdg : "";
    setenv("XDG_CACHE_HOME", cache.path().c_str(), 1);
    const auto unpinned = run_cli("info --json");
    if (xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
    else unsetenv("XDG_CACHE_HOME");
    if (model) setenv("NOVELTY_MODEL_DIR", saved_model.c_str(), 1);
    else unsetenv("NOVELTY_MODEL_DIR");
    if (pin) setenv("NOVELTY_AUTO_PRECISION", saved.c_str(), 1);
    ASSERT_EQ(unpinned.exit_code, 0) << unpinned.err;
    const auto u = nlohmann::json::parse(unpinned.out)["encoder_precision"];
    EXPECT_EQ(u["precision"], "f32");
    EXPECT_NE(u["reason"].get<std::string>().find("the only precision that keeps the bar"), std::string::npos)
        << u["reason"];
    EXPECT_TRUE(std::filesystem::is_empty(cache.path())) << "nothing was calibrated or cached";
}
