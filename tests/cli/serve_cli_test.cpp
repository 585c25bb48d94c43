// novelty serve as a process: flags refused as by score, a token file, and SIGTERM ending it
// cleanly after serving.
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "novelty/search/backends.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <regex>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

std::string small_corpus(const TempDir& tmp) {
    std::string records;
    for (int i = 0; i < 12; ++i)
        records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper " + std::to_string(i) + "\", \"year\": 2010}\n";
    novelty::test::write_file(tmp.file("papers.jsonl"), records);
    EXPECT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(tmp.file("c"))).exit_code, 0);
    const auto v = novelty::test::random_unit_rows(12, 4, 1);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 12, 4, v.data());
    EXPECT_EQ(run_cli("corpus add-vectors -q " + shell_quote(tmp.file("c")) + " --vectors " + shell_quote(tmp.file("v.npy"))).exit_code, 0);
    return tmp.file("c");
}

}  // namespace

TEST(ServeCli, RefusesCudaAndEmptyTokenFilesAsUsageErrors) {
    TempDir tmp;
    const std::string dir = small_corpus(tmp);
    if (novelty::auto_device() != "cuda") {  // with a usable GPU it would serve instead
        const auto cuda = run_cli("serve --corpus " + shell_quote(dir) + " --port 0 --device cuda");
        EXPECT_EQ(cuda.exit_code, 2);
        EXPECT_NE(cuda.err.find("device cuda"), std::string::npos) << cuda.err;
        EXPECT_NE(cuda.err.find("(--device)"), std::string::npos) << cuda.err;  // the flag at fault
    }
    novelty::test::write_file(tmp.file("token"), "  \n");
    const auto empty = run_cli("serve --corpus " + shell_quote(dir) + " --port 0 --token-file " + shell_quote(tmp.file("token")));
    EXPECT_EQ(empty.exit_code, 2);
    EXPECT_NE(empty.err.find("holds no token"), std::string::npos) << empty.err;
    const auto missing = run_cli("serve --corpus " + shell_quote(tmp.file("nowhere")) + " --port 0");
    EXPECT_EQ(missing.exit_code, 4) << missing.err;
}

TEST(ServeCli, ServesWithATokenAndStopsOnSigterm) {
    TempDir tmp;
    const std::string dir = small_corpus(tmp);
    novelty::test::write_file(tmp.file("token"), "abc123\n");
    const std::string log = tmp.file("serve.log");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        FILE* err = std::freopen(log.c_str(), "w", stderr);
        (void)err;
        execl(NOVELTY_CLI_PATH, "novelty", "serve", "--corpus", dir.c_str(), "--port", "0", "--token-file",
              tmp.file("token").c_str(), "--threads", "1", static_cast<char*>(nullptr));
        _exit(127);
    }
    // The port is in the start line on stderr.
    int port = 0;
    const std::regex address(R"(http://127\.0\.0\.1:(\d+))");
    for (int i = 0; i < 3000 && port == 0; ++i) {
        std::smatch m;
        std::string text;
        try {
            text = novelty::test::read_file(log);
        } catch (const std::exception&) {  // not created yet
        }
        if (std::regex_search(text, m, address)) port = std::stoi(m[1]);
        else std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(port, 0) << novelty::test::read_file(log);
    httplib::Client client("127.0.0.1", port);
    auto health = client.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    const std::string body = R"({"queries": [{"id": "p2"}], "k": 3})";
    auto refused = client.Post("/v1/search", body, "application/json");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 401);
    auto ok = client.Post("/v1/search", {{"Authorization", "Bearer abc123"}}, body, "application/json");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200);
    EXPECT_EQ(nlohmann::json::parse(ok->body)["results"][0]["neighbors"].size(), 3u);

    ASSERT_EQ(kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_NE(novelty::test::read_file(log).find("stopped"), std::string::npos);
}
