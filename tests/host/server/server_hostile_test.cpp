// The server against hostile clients (issue 22), over real sockets on 127.0.0.1, every wait
// bounded: bodies that are not UTF-8, nested too deeply or hold 1e999 get 400 and leave no
// request counted in flight; chunked bodies over the limit get 413; clients that send their
// headers a line at a time cannot hold every thread, and /healthz keeps answering; connections
// beyond --max-connections get 503 at once; a body that stops arriving gets 408.
#include "novelty/io/npy.hpp"
#include "novelty_host/server/server.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using novelty::host::Server;
using novelty::host::ServerOptions;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

constexpr std::size_t dim = 8;

// A connected loopback socket with a receive timeout, closed on destruction.
class RawClient {
public:
    explicit RawClient(int port, int recv_timeout_ms = 10000) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        timeval tv{recv_timeout_ms / 1000, (recv_timeout_ms % 1000) * 1000};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    }
    ~RawClient() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool connected() const { return connected_; }
    bool send(const std::string& bytes) {
        return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
    }
    // Everything until the server closes, the receive timeout, or a whole reply (headers and
    // Content-Length bytes) has come.
    std::string reply() {
        std::string out;
        char buffer[4096];
        for (;;) {
            const ssize_t got = ::recv(fd_, buffer, sizeof buffer, 0);
            if (got <= 0) break;
            out.append(buffer, static_cast<std::size_t>(got));
            const auto end = out.find("\r\n\r\n");
            const auto length_at = out.find("Content-Length: ");
            if (end != std::string::npos && length_at != std::string::npos && length_at < end &&
                out.size() >= end + 4 + std::stoul(out.substr(length_at + 16)))
                break;
        }
        return out;
    }

private:
    int fd_ = -1;
    bool connected_ = false;
};

int status_of(const std::string& reply) {
    if (reply.rfind("HTTP/1.1 ", 0) != 0 || reply.size() < 12) return -1;
    return std::stoi(reply.substr(9, 3));
}

std::string post_request(const std::string& path, const std::string& body) {
    return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// GET /healthz on a fresh connection: its status, or -1 with no reply.
int healthz(int port, int recv_timeout_ms) {
    RawClient client(port, recv_timeout_ms);
    if (!client.connected() || !client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) return -1;
    return status_of(client.reply());
}

class ServerHostileTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir();
        std::string records;
        for (int i = 0; i < 30; ++i)
            records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper " + std::to_string(i) +
                       "\", \"year\": " + std::to_string(2000 + i % 20) + "}\n";
        novelty::test::write_file(tmp_->file("papers.jsonl"), records);
        const auto r = run_cli("corpus import -q --in " + shell_quote(tmp_->file("papers.jsonl")) + " --out " +
                               shell_quote(tmp_->file("c")));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto v = novelty::test::random_unit_rows(30, dim, 3);
        novelty::write_npy(tmp_->file("v.npy"), novelty::DType::f32, 30, dim, v.data());
        const auto a = run_cli("corpus add-vectors -q " + shell_quote(tmp_->file("c")) + " --vectors " +
                               shell_quote(tmp_->file("v.npy")));
        ASSERT_EQ(a.exit_code, 0) << a.err;
    }
    static void TearDownTestSuite() {
        delete tmp_;
        tmp_ = nullptr;
    }
    static ServerOptions options() {
        ServerOptions o;
        o.corpus_dir = tmp_->file("c");
        o.port = 0;
        o.threads = 1;
        o.http_threads = 4;
        return o;
    }
    static TempDir* tmp_;
};
TempDir* ServerHostileTest::tmp_ = nullptr;

TEST_F(ServerHostileTest, BadJsonGets400AndLeavesNothingInFlight) {
    Server server(options());
    server.start();
    std::string nested(100000, '[');
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{\"queries\": [{\"id\": \"q\", \"title\": \"caf\xE9\"}]}", "UTF-8"},
        {"{\"queries\": [{\"id\": \"\xC3\"}]}", "UTF-8"},
        {"{\"queries\": [{\"id\": \"q\", \"vector\": [1e999, 0, 0, 0, 0, 0, 0, 1]}]}", "out of range"},
        {"{\"queries\": [{\"id\": \"q\"}], \"judge\": " + nested + "}", "nested deeper than"},
    };
    for (const auto& [body, expected] : cases) {
        RawClient client(server.port());
        ASSERT_TRUE(client.connected());
        ASSERT_TRUE(client.send(post_request("/v1/search", body)));
        const std::string reply = client.reply();
        EXPECT_EQ(status_of(reply), 400) << reply.substr(0, 300);
        const auto json_at = reply.find("\r\n\r\n");
        ASSERT_NE(json_at, std::string::npos);
        const auto parsed = nlohmann::json::parse(reply.substr(json_at + 4), nullptr, false);
        ASSERT_TRUE(parsed.is_object()) << reply.substr(0, 300);
        const std::string message = parsed.value("error", "");
        EXPECT_NE(message.find(expected), std::string::npos) << message;
        EXPECT_LT(message.size(), 600u) << "the message copies the body";
    }
    EXPECT_EQ(server.in_flight(), 0u);
    server.stop();
}

TEST_F(ServerHostileTest, ChunkedBodyOverTheLimitGets413) {
    ServerOptions o = options();
    o.max_body_bytes = 1000;
    Server server(o);
    server.start();
    RawClient client(server.port());
    ASSERT_TRUE(client.connected());
    std::string request = "POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n";
    const std::string chunk(500, ' ');
    for (int i = 0; i < 4; ++i) request += "1f4\r\n" + chunk + "\r\n";  // 2000 bytes in 4 chunks
    request += "0\r\n\r\n";
    ASSERT_TRUE(client.send(request));
    const std::string reply = client.reply();
    EXPECT_EQ(status_of(reply), 413) << reply.substr(0, 300);
    // Under the limit, the same framing is read whole.
    RawClient small(server.port());
    const std::string body = R"({"queries": [{"id": "p3"}], "k": 2})";
    char size[16];
    std::snprintf(size, sizeof size, "%zx", body.size());
    ASSERT_TRUE(small.send("POST /v1/search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                           std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n"));
    EXPECT_EQ(status_of(small.reply()), 200);
    EXPECT_EQ(server.in_flight(), 0u);
    server.stop();
}

// 3x as many slow clients as threads, each sending a header line every 300 ms for up to 30 s.
// With a 1 s header deadline they are cut off, and /healthz answers again soon; the old server
// kept every thread until the clients gave up, so all 10 tries (about 12 s) failed. (10 tries
// are far more than the deadline needs; no duration is asserted.)
TEST_F(ServerHostileTest, SlowHeaderClientsCannotStarveHealthz) {
    ServerOptions o = options();
    o.http_threads = 4;
    o.header_timeout = std::chrono::milliseconds(1000);
    Server server(o);
    server.start();
    const int port = server.port();
    std::atomic<bool> done{false};
    std::vector<std::thread> slow;
    for (int c = 0; c < 12; ++c)
        slow.emplace_back([port, &done] {
            RawClient client(port, 500);
            if (!client.connected() || !client.send("GET /healthz HTTP/1.1\r\n")) return;
            for (int line = 0; line < 100 && !done; ++line) {
                std::this_thread::sleep_for(std::chrono::milliseconds(300));
                if (!client.send("X-Slow-" + std::to_string(line) + ": 1\r\n")) return;  // cut off: stop
            }
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int ok = 0;
    for (int attempt = 0; attempt < 10 && ok == 0; ++attempt) {
        const int status = healthz(port, 1000);
        if (status == 200) ok = 1;
        else std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    done = true;
    for (auto& t : slow) t.join();
    EXPECT_EQ(ok, 1) << "/healthz never answered while slow clients were connected";
    server.stop();
}

// A body that stops arriving is cut off at the body deadline with 408, not waited for.
TEST_F(ServerHostileTest, SlowBodyGets408AtItsDeadline) {
    ServerOptions o = options();
    o.body_timeout = std::chrono::milliseconds(500);
    Server server(o);
    server.start();
    RawClient client(server.port());
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.send("POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            "Content-Length: 100\r\n\r\n{\"queries\": "));
    const std::string reply = client.reply();
    EXPECT_EQ(status_of(reply), 408) << reply.substr(0, 300);
    EXPECT_EQ(server.in_flight(), 0u);
    server.stop();
}

// A POST without any body (no Content-Length, not chunked) is told so, not that the body broke.
TEST_F(ServerHostileTest, PostWithoutABodyIsToldItHasNone) {
    Server server(options());
    server.start();
    RawClient client(server.port());
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.send("POST /v1/search HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    const std::string reply = client.reply();
    EXPECT_EQ(status_of(reply), 400) << reply.substr(0, 300);
    EXPECT_NE(reply.find("the request has no body"), std::string::npos) << reply.substr(0, 400);
    server.stop();
}

TEST_F(ServerHostileTest, ConnectionsBeyondTheLimitGet503AtOnce) {
    ServerOptions o = options();
    o.http_threads = 2;
    o.max_connections = 2;
    o.header_timeout = std::chrono::milliseconds(2000);
    Server server(o);
    server.start();
    // Two idle connections fill the limit (they hold it until their header deadline).
    RawClient a(server.port()), b(server.port());
    ASSERT_TRUE(a.connected() && b.connected());
    ASSERT_TRUE(a.send("GET /healthz HTTP/1.1\r\n"));
    ASSERT_TRUE(b.send("GET /healthz HTTP/1.1\r\n"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(healthz(server.port(), 3000), 503);
    server.stop();
}

}  // namespace
