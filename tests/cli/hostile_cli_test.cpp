// The CLI against hostile arguments and inputs (issue 22): negative counts, a token file that is
// a directory, whitespace-only query text, and inputs given as a process substitution.
#include "llm/json_answer.hpp"
#include "novelty/io/npy.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using novelty::test::write_file;

namespace {

// A 3-paper corpus with 4-d vectors and no encoder.
std::string small_corpus(const TempDir& tmp) {
    write_file(tmp.file("p.jsonl"), "{\"id\": \"a\", \"title\": \"A\", \"year\": 2001}\n"
                                    "{\"id\": \"b\", \"title\": \"B\", \"year\": 2002}\n"
                                    "{\"id\": \"c\", \"title\": \"C\", \"year\": 2003}\n");
    const std::string dir = tmp.file("c");
    auto r = run_cli("corpus import -q --in " + shell_quote(tmp.file("p.jsonl")) + " --out " + shell_quote(dir));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const float rows[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 3, 4, rows);
    r = run_cli("corpus add-vectors -q " + shell_quote(dir) + " --vectors " + shell_quote(tmp.file("v.npy")));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir;
}

}  // namespace

TEST(HostileCli, NegativeCountsAreRefused) {
    TempDir tmp;
    const std::string dir = small_corpus(tmp);
    write_file(tmp.file("q.jsonl"), "{\"id\": \"a\"}\n");
    for (const std::string& flags : {std::string("--threads -1"), std::string("--evidence -1")}) {
        const auto r = run_cli("score --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("q.jsonl")) +
                               " --p 1 --q 1 " + flags);
        EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.err;
        EXPECT_NE(r.err.find("-1"), std::string::npos) << r.err;
    }
    const auto s = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                           " --threads -1");
    EXPECT_EQ(s.exit_code, 2) << s.err;
    const auto v = run_cli("serve --corpus " + shell_quote(dir) + " --port 0 --evidence -1");
    EXPECT_EQ(v.exit_code, 2) << v.err;
}

TEST(HostileCli, TokenFileThatIsADirectoryIsNamedAsSuch) {
    TempDir tmp;
    const std::string dir = small_corpus(tmp);
    std::filesystem::create_directories(tmp.file("tokens"));
    const auto r = run_cli("serve --corpus " + shell_quote(dir) + " --port 0 --token-file " + shell_quote(tmp.file("tokens")));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
}

// Whitespace alone is no text: such a query is not embedded (this corpus has no encoder, so
// embedding would fail differently); one whose id is a paper uses that paper's vector.
TEST(HostileCli, WhitespaceOnlyQueryTextIsNoText) {
    TempDir tmp;
    const std::string dir = small_corpus(tmp);
    write_file(tmp.file("q.jsonl"), "{\"id\": \"zz\", \"title\": \"  \\t\", \"text\": \"\\n \"}\n");
    auto r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) + " --k 1");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("has no text"), std::string::npos) << r.err;
    write_file(tmp.file("q2.jsonl"), "{\"id\": \"b\", \"title\": \"   \"}\n");
    r = run_cli("search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q2.jsonl")) + " --k 1");
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

// bash process substitution: the file is a pipe that can be read once.
TEST(HostileCli, ImportReadsAProcessSubstitution) {
    TempDir tmp;
    write_file(tmp.file("p.jsonl"), "{\"id\": \"a\", \"title\": \"A\", \"year\": 2001}\n"
                                    "{\"id\": \"b\", \"title\": \"B\", \"year\": 2002}\n");
    const std::string cli = NOVELTY_CLI_PATH;
    const std::string command = "bash -c " + shell_quote(shell_quote(cli) + " corpus import -q --in <(cat " +
                                                         shell_quote(tmp.file("p.jsonl")) + ") --out " +
                                                         shell_quote(tmp.file("c")) + " 2>&1; echo rc=$?");
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    ::pclose(pipe);
    EXPECT_NE(out.find("rc=0"), std::string::npos) << out;
    const auto info = run_cli("corpus info " + shell_quote(tmp.file("c")));
    EXPECT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE((info.out + info.err).find("2"), std::string::npos);
}

TEST(HostileLlmAnswer, DeeplyNestedAnswerIsAProblemNotACrash) {
    nlohmann::json out;
    const std::string answer = "{\"level\": 3, \"reason\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
    const auto problem = novelty::host::detail::parse_answer_object(answer, out);
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->find("nested deeper"), std::string::npos) << *problem;
    EXPECT_LT(problem->size(), 500u);
    const auto big = novelty::host::detail::parse_answer_object("{\"level\": 1e999}", out);
    ASSERT_TRUE(big.has_value());
}
