// novelty serve as a process: flags refused as by score, a token file, SIGTERM ending it
// cleanly after serving, and answering while `corpus add` replaces or updates its corpus.
#include "corpus/sqlite_db.hpp"
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "novelty/search/backends.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <filesystem>
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

namespace {

// `n` s2 papers from corpusid `first` (dated by id) and their vectors, in two files.
void s2_files(const std::string& papers_path, const std::string& vectors_path, int first, int n) {
    std::string p, e;
    const auto v = novelty::test::random_unit_rows(static_cast<std::size_t>(n), 4, static_cast<std::uint32_t>(first + 1));
    for (int i = 0; i < n; ++i) {
        const int id = first + i;
        p += "{\"corpusid\": " + std::to_string(id) + ", \"title\": \"Paper " + std::to_string(id) + "\", \"year\": " +
             std::to_string(1990 + id % 25) + "}\n";
        e += "{\"corpusid\": " + std::to_string(id) + ", \"model\": \"specter_v2\", \"vector\": \"[";
        for (int d = 0; d < 4; ++d) e += (d ? ", " : "") + std::to_string(v[static_cast<std::size_t>(i * 4 + d)]);
        e += "]\"}\n";
    }
    novelty::test::write_file(papers_path, p);
    novelty::test::write_file(vectors_path, e);
}

// Starts `novelty serve` on `dir` (127.0.0.1, any port), stderr into `log`; returns its PID and port.
std::pair<pid_t, int> start_server(const std::string& dir, const std::string& log) {
    const pid_t pid = fork();
    if (pid == 0) {
        FILE* err = std::freopen(log.c_str(), "w", stderr);
        (void)err;
        execl(NOVELTY_CLI_PATH, "novelty", "serve", "--corpus", dir.c_str(), "--port", "0", "--threads", "2",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    int port = 0;
    const std::regex address(R"(http://127\.0\.0\.1:(\d+))");
    for (int i = 0; i < 3000 && port == 0 && pid > 0; ++i) {
        std::smatch m;
        std::string text;
        try {
            text = novelty::test::read_file(log);
        } catch (const std::exception&) {  // not created yet
        }
        if (std::regex_search(text, m, address)) port = std::stoi(m[1]);
        else std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return {pid, port};
}

}  // namespace

// A server keeps answering from the corpus it opened while adds change the corpus under its
// path: the first add goes through a copy (the server holds the corpus) and renames a new
// directory into place; the second finds that new directory unheld and updates its papers.sqlite
// in place, with a rollback journal beside it, at the path the server's files were opened by.
// Every reply is a 200 from the old corpus (the server never reopens it). A writer transaction
// held open on the new corpus makes the journal's presence certain for a stretch of requests.
TEST(ServeCli, KeepsAnsweringWhileAddsReplaceAndUpdateItsCorpus) {
    TempDir tmp;
    s2_files(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 30);
    s2_files(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 100, 5);
    s2_files(tmp.file("p2.jsonl"), tmp.file("e2.jsonl"), 200, 5);
    const std::string dir = tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --format s2 --in " + shell_quote(tmp.file("p0.jsonl")) + " " +
                      shell_quote(tmp.file("e0.jsonl")) + " --out " + shell_quote(dir)).exit_code, 0);
    const auto [pid, port] = start_server(dir, tmp.file("serve.log"));
    ASSERT_GT(pid, 0);
    ASSERT_GT(port, 0) << novelty::test::read_file(tmp.file("serve.log"));
    std::atomic<bool> stop{false};
    std::atomic<int> n_ok{0};
    std::vector<std::string> failures;
    std::thread client([&] {
        httplib::Client http("127.0.0.1", port);
        for (int i = 0; i < 20000 && !stop; ++i) {  // (bounded)
            const std::string body = R"({"queries": [{"id": ")" + std::to_string(i % 30) + R"("}], "k": 5})";
            auto reply = http.Post("/v1/search", body, "application/json");
            if (!reply) failures.push_back("no reply");
            else if (reply->status != 200) failures.push_back(std::to_string(reply->status) + ": " + reply->body);
            else if (nlohmann::json::parse(reply->body)["results"][0]["neighbors"].size() != 5u) failures.push_back(reply->body);
            else ++n_ok;
            if (failures.size() >= 5) break;
        }
    });
    const auto wait_for_replies = [&](int n) {
        const int target = n_ok + n;
        for (int i = 0; i < 6000 && n_ok < target && failures.size() < 5; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    };
    wait_for_replies(20);
    const auto first = run_cli("corpus add " + shell_quote(dir) + " --format s2 --in " + shell_quote(tmp.file("p1.jsonl")) +
                               " " + shell_quote(tmp.file("e1.jsonl")));
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.err.find("through a copy"), std::string::npos) << first.err;
    wait_for_replies(20);
    {
        novelty::SqliteDb writer(dir + "/papers.sqlite", novelty::SqliteDb::Mode::read_write);
        // (pages spilled from a tiny cache: the journal is synced with a live header, as during a commit)
        writer.exec("PRAGMA journal_mode = DELETE; PRAGMA cache_size = 10; BEGIN IMMEDIATE; CREATE TABLE junk (x BLOB); "
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
                    "INSERT INTO junk SELECT randomblob(1024) FROM n;");
        EXPECT_TRUE(std::filesystem::exists(dir + "/papers.sqlite-journal"));
        wait_for_replies(50);
        writer.exec("ROLLBACK");
    }
    const auto second = run_cli("corpus add -q " + shell_quote(dir) + " --format s2 --in " + shell_quote(tmp.file("p2.jsonl")) +
                                " " + shell_quote(tmp.file("e2.jsonl")));
    EXPECT_EQ(second.exit_code, 0) << second.err;
    wait_for_replies(20);
    stop = true;
    client.join();
    EXPECT_EQ(failures, std::vector<std::string>{}) << n_ok << " good replies before";
    EXPECT_GE(n_ok, 110);
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(run_cli("corpus info " + shell_quote(dir)).exit_code, 0);
}
