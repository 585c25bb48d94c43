// HttpEmbedder against an in-process fake OpenAI-compatible server (cpp-httplib on 127.0.0.1).
// Backoff waits go through an injected sleep that records them, so no test really waits.

#include "novelty_host/llm/http_embedder.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "novelty/util/error.hpp"

namespace {

using json = nlohmann::json;
using novelty::host::HttpEmbedder;
using novelty::host::HttpEmbedderOptions;

/// A deterministic, un-normalised vector for `text`: splitmix64 seeded with the text's FNV-1a hash.
std::vector<float> fake_embedding(const std::string& text, std::size_t dim) {
    std::uint64_t state = 1469598103934665603ULL;
    for (unsigned char c : text) state = (state ^ c) * 1099511628211ULL;
    std::vector<float> v(dim);
    for (auto& x : v) {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        x = static_cast<float>(static_cast<double>(z >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    return v;
}

std::vector<float> normalised(std::vector<float> v) {
    double sum = 0;
    for (float x : v) sum += static_cast<double>(x) * x;
    const double scale = 1.0 / std::sqrt(sum);
    for (auto& x : v) x = static_cast<float>(x * scale);
    return v;
}

/// What the server saw of one request.
struct RecordedRequest {
    std::string path;
    std::string authorization;  // "" when absent
    std::string content_type;
    json body;
    int remote_port = 0;
};

/// A fake /v1/embeddings server. Each request is recorded, then handed to the behaviour with its
/// 0-based sequence number; the default behaviour answers normally with dimension 8.
class FakeServer {
public:
    using Behaviour = std::function<void(const httplib::Request&, httplib::Response&, int call)>;

    FakeServer() {
        server_.set_keep_alive_timeout(1);
        server_.set_tcp_nodelay(true);  // no Nagle delay between the headers and the body
        server_.Post("/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) {
            int call = 0;
            Behaviour behaviour;
            {
                std::lock_guard lock(mutex_);
                RecordedRequest r;
                r.path = req.path;
                r.authorization = req.get_header_value("Authorization");
                r.content_type = req.get_header_value("Content-Type");
                r.body = json::parse(req.body, nullptr, false);
                r.remote_port = req.remote_port;
                requests_.push_back(std::move(r));
                call = static_cast<int>(requests_.size()) - 1;
                behaviour = behaviour_;
            }
            behaviour(req, res, call);
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        if (port_ <= 0) throw std::runtime_error("fake server: could not bind 127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        // stop() is a no-op until the accept loop runs: wait for it, so that stop() always stops.
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }

    ~FakeServer() { stop(); }
    FakeServer(const FakeServer&) = delete;
    FakeServer& operator=(const FakeServer&) = delete;

    /// Releases delayed handlers and stops the server (idempotent).
    void stop() {
        {
            std::lock_guard lock(mutex_);
            released_ = true;
        }
        released_cv_.notify_all();
        if (thread_.joinable()) {
            server_.stop();
            thread_.join();
        }
    }

    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

    void set_behaviour(Behaviour behaviour) {
        std::lock_guard lock(mutex_);
        behaviour_ = std::move(behaviour);
    }

    std::vector<RecordedRequest> requests() const {
        std::lock_guard lock(mutex_);
        return requests_;
    }

    /// Blocks a handler for up to `limit` or until stop().
    void hold(std::chrono::milliseconds limit) {
        std::unique_lock lock(mutex_);
        released_cv_.wait_for(lock, limit, [this] { return released_; });
    }

    /// The answer a well-behaved server gives: one embedding of dimension `dim` per input, listed
    /// in a shuffled (rotated and reversed) order, each with its "index".
    static json answer(const httplib::Request& req, std::size_t dim) {
        const json body = json::parse(req.body);
        const auto& input = body.at("input");
        json data = json::array();
        const std::size_t n = input.size();
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t i = (n - 1 - k + n / 3) % n;
            data.push_back({{"object", "embedding"},
                            {"index", i},
                            {"embedding", fake_embedding(input[i].get<std::string>(), dim)}});
        }
        return {{"object", "list"}, {"data", data}, {"model", body.value("model", "")},
                {"usage", {{"prompt_tokens", 1}, {"total_tokens", 1}}}};
    }

    static void send(httplib::Response& res, const json& j) { res.set_content(j.dump(), "application/json"); }

    static void answer_normally(const httplib::Request& req, httplib::Response& res, std::size_t dim = 8) {
        send(res, answer(req, dim));
    }

private:
    httplib::Server server_;
    std::thread thread_;
    int port_ = 0;
    mutable std::mutex mutex_;
    std::condition_variable released_cv_;
    bool released_ = false;
    std::vector<RecordedRequest> requests_;
    Behaviour behaviour_ = [](const httplib::Request& req, httplib::Response& res, int) {
        answer_normally(req, res);
    };
};

/// Runs `f`, expects a novelty::Error and returns its message.
template <class F>
std::string error_message(F&& f) {
    try {
        f();
    } catch (const novelty::Error& e) {
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected novelty::Error, got another exception: " << e.what();
        return "";
    }
    ADD_FAILURE() << "expected novelty::Error, nothing was thrown";
    return "";
}

std::vector<std::string> make_texts(std::size_t n) {
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < n; ++i) texts.push_back("text number " + std::to_string(i));
    return texts;
}

class HttpEmbedderTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // The fake server is local: keep any proxy configured in the environment out of the way.
        ::setenv("no_proxy", "127.0.0.1,localhost", 1);
        ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    }

    HttpEmbedderOptions options() const {
        HttpEmbedderOptions o;
        o.base_url = server.base_url();
        o.model = "fake-model";
        o.timeout_seconds = 5;
        return o;
    }

    HttpEmbedder make(const HttpEmbedderOptions& o) {
        return HttpEmbedder(o, [this](double seconds) { sleeps.push_back(seconds); });
    }

    /// Expects `rows` to hold the normalised fake embeddings of `texts`, in order.
    static void expect_rows(const std::vector<float>& rows, const std::vector<std::string>& texts, std::size_t dim) {
        ASSERT_EQ(rows.size(), texts.size() * dim);
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto expected = normalised(fake_embedding(texts[i], dim));
            double norm = 0;
            for (std::size_t d = 0; d < dim; ++d) {
                EXPECT_NEAR(rows[i * dim + d], expected[d], 1e-6) << "row " << i << ", column " << d;
                norm += static_cast<double>(rows[i * dim + d]) * rows[i * dim + d];
            }
            EXPECT_NEAR(norm, 1.0, 1e-5) << "row " << i;
        }
    }

    FakeServer server;
    std::vector<double> sleeps;
};

TEST_F(HttpEmbedderTest, SendsOpenAiRequestAndOrdersRowsByIndex) {
    auto o = options();
    o.api_key = "sk-test-123";
    HttpEmbedder embedder = make(o);
    EXPECT_EQ(embedder.dim(), 0u);
    EXPECT_EQ(embedder.pooling(), "");
    EXPECT_EQ(embedder.name(), server.base_url() + "#fake-model");

    const std::vector<std::string> texts = {"alpha", "beta", "gamma", "delta", "epsilon"};
    const auto rows = embedder.embed(texts);
    EXPECT_EQ(embedder.dim(), 8u);
    expect_rows(rows, texts, 8);

    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    const auto& r = requests[0];
    EXPECT_EQ(r.path, "/v1/embeddings");
    EXPECT_EQ(r.authorization, "Bearer sk-test-123");
    EXPECT_EQ(r.content_type, "application/json");
    ASSERT_TRUE(r.body.is_object());
    EXPECT_EQ(r.body.at("model"), "fake-model");
    EXPECT_EQ(r.body.at("encoding_format"), "float");
    EXPECT_EQ(r.body.at("input").get<std::vector<std::string>>(), texts);
    EXPECT_TRUE(sleeps.empty());
}

TEST_F(HttpEmbedderTest, TrailingSlashInBaseUrlIsIgnored) {
    auto o = options();
    o.base_url += "/";
    HttpEmbedder embedder = make(o);
    EXPECT_EQ(embedder.name(), server.base_url() + "#fake-model");
    embedder.embed({"x"});
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(server.requests()[0].path, "/v1/embeddings");
}

TEST_F(HttpEmbedderTest, BatchesInOrderOverOneConnection) {
    auto o = options();
    o.batch_size = 64;
    HttpEmbedder embedder = make(o);
    const auto texts = make_texts(130);
    const auto rows = embedder.embed(texts);
    expect_rows(rows, texts, 8);

    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 3u);
    const std::size_t sizes[] = {64, 64, 2};
    std::size_t first = 0;
    for (std::size_t k = 0; k < 3; ++k) {
        const auto input = requests[k].body.at("input").get<std::vector<std::string>>();
        ASSERT_EQ(input.size(), sizes[k]) << "request " << k;
        EXPECT_TRUE(std::equal(input.begin(), input.end(), texts.begin() + static_cast<std::ptrdiff_t>(first)))
            << "request " << k;
        first += sizes[k];
    }
    // One curl handle, kept alive: the same client port for every request.
    EXPECT_EQ(requests[1].remote_port, requests[0].remote_port);
    EXPECT_EQ(requests[2].remote_port, requests[0].remote_port);
}

TEST_F(HttpEmbedderTest, EmptyListSendsNothingAndEmptyTextIsSentAsSpace) {
    HttpEmbedder embedder = make(options());
    EXPECT_TRUE(embedder.embed({}).empty());
    EXPECT_TRUE(server.requests().empty());
    EXPECT_EQ(embedder.dim(), 0u);

    const auto rows = embedder.embed({"", "b"});
    expect_rows(rows, {" ", "b"}, 8);
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(server.requests()[0].body.at("input"), json({" ", "b"}));
}

TEST_F(HttpEmbedderTest, UnauthorisedWithoutKeyIsNotRetried) {
    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int) {
        if (req.get_header_value("Authorization") != "Bearer right-key") {
            res.status = 401;
            res.set_content(R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}})",
                            "application/json");
            return;
        }
        FakeServer::answer_normally(req, res);
    });
    {
        HttpEmbedder embedder = make(options());
        const auto message = error_message([&] { embedder.embed({"a"}); });
        EXPECT_NE(message.find("HTTP 401"), std::string::npos) << message;
        EXPECT_NE(message.find("Incorrect API key provided"), std::string::npos) << message;
        EXPECT_NE(message.find("API key"), std::string::npos) << message;
        EXPECT_NE(message.find(server.base_url() + "/embeddings"), std::string::npos) << message;
        EXPECT_EQ(embedder.requests_sent(), 1u);
        EXPECT_EQ(server.requests().at(0).authorization, "");
        EXPECT_EQ(embedder.dim(), 0u);
    }
    auto o = options();
    o.api_key = "right-key";
    HttpEmbedder embedder = make(o);
    expect_rows(embedder.embed({"a"}), {"a"}, 8);
    EXPECT_TRUE(sleeps.empty());
}

TEST_F(HttpEmbedderTest, ClientErrorIsNotRetried) {
    server.set_behaviour([](const httplib::Request&, httplib::Response& res, int) {
        res.status = 400;
        res.set_content("input is longer than the model's maximum of 512 tokens", "text/plain");
    });
    HttpEmbedder embedder = make(options());
    const auto message = error_message([&] { embedder.embed(make_texts(3)); });
    EXPECT_NE(message.find("HTTP 400"), std::string::npos) << message;
    EXPECT_NE(message.find("maximum of 512 tokens"), std::string::npos) << message;
    EXPECT_NE(message.find("texts 0..2"), std::string::npos) << message;
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_TRUE(sleeps.empty());
}

TEST_F(HttpEmbedderTest, ServerErrorIsRetriedThenSucceeds) {
    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int call) {
        if (call < 2) {
            res.status = 500;
            res.set_content("internal error", "text/plain");
            return;
        }
        FakeServer::answer_normally(req, res);
    });
    HttpEmbedder embedder = make(options());  // initial backoff 0.5 s
    const auto texts = make_texts(4);
    expect_rows(embedder.embed(texts), texts, 8);
    EXPECT_EQ(server.requests().size(), 3u);
    EXPECT_EQ(embedder.requests_sent(), 3u);
    ASSERT_EQ(sleeps.size(), 2u);
    EXPECT_GE(sleeps[0], 0.45);
    EXPECT_LE(sleeps[0], 0.5);
    EXPECT_GE(sleeps[1], 0.9);
    EXPECT_LE(sleeps[1], 1.0);
}

TEST_F(HttpEmbedderTest, BackoffDoublesUpToTheCapThenGivesUp) {
    server.set_behaviour([](const httplib::Request&, httplib::Response& res, int) {
        res.status = 503;
        res.set_content("model is loading", "text/plain");
    });
    auto o = options();
    o.initial_backoff_seconds = 0.5;
    o.max_backoff_seconds = 1.5;
    o.max_retries = 5;
    HttpEmbedder embedder = make(o);
    const auto message = error_message([&] { embedder.embed({"a"}); });
    EXPECT_NE(message.find("failed after 6 attempts"), std::string::npos) << message;
    EXPECT_NE(message.find("HTTP 503"), std::string::npos) << message;
    EXPECT_NE(message.find("model is loading"), std::string::npos) << message;
    EXPECT_EQ(server.requests().size(), 6u);
    const double nominal[] = {0.5, 1.0, 1.5, 1.5, 1.5};
    ASSERT_EQ(sleeps.size(), 5u);
    for (std::size_t k = 0; k < 5; ++k) {
        EXPECT_GE(sleeps[k], nominal[k] * 0.9 - 1e-12) << "wait " << k;
        EXPECT_LE(sleeps[k], nominal[k]) << "wait " << k;
    }
}

TEST_F(HttpEmbedderTest, RateLimitHonoursRetryAfterSeconds) {
    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int call) {
        if (call == 0) {
            res.status = 429;
            res.set_header("Retry-After", "7");
            res.set_content(R"({"error":{"message":"Rate limit reached"}})", "application/json");
            return;
        }
        if (call == 1) {
            res.status = 429;
            res.set_header("Retry-After", "3600");  // more than max_backoff_seconds: capped
            return;
        }
        FakeServer::answer_normally(req, res);
    });
    HttpEmbedder embedder = make(options());  // max backoff 30 s
    expect_rows(embedder.embed({"a", "b"}), {"a", "b"}, 8);
    EXPECT_EQ(server.requests().size(), 3u);
    EXPECT_EQ(sleeps, (std::vector<double>{7.0, 30.0}));
}

TEST_F(HttpEmbedderTest, RateLimitHonoursRetryAfterHttpDate) {
    const std::time_t when = std::time(nullptr) + 20;
    std::tm tm{};
    ::gmtime_r(&when, &tm);
    char date[64];
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    const std::string retry_after = date;
    server.set_behaviour([retry_after](const httplib::Request& req, httplib::Response& res, int call) {
        if (call == 0) {
            res.status = 503;
            res.set_header("Retry-After", retry_after);
            return;
        }
        FakeServer::answer_normally(req, res);
    });
    HttpEmbedder embedder = make(options());
    embedder.embed({"a"});
    ASSERT_EQ(sleeps.size(), 1u);
    EXPECT_GE(sleeps[0], 17.0);
    EXPECT_LE(sleeps[0], 20.0);
}

TEST_F(HttpEmbedderTest, TimeoutsAreRetriedThenFailClearly) {
    server.set_behaviour([this](const httplib::Request& req, httplib::Response& res, int) {
        server.hold(std::chrono::milliseconds(3000));
        FakeServer::answer_normally(req, res);
    });
    auto o = options();
    o.timeout_seconds = 0.15;
    o.max_retries = 1;
    HttpEmbedder embedder = make(o);
    const auto start = std::chrono::steady_clock::now();
    const auto message = error_message([&] { embedder.embed({"slow"}); });
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(message.find("timed out after 0.15 s"), std::string::npos) << message;
    EXPECT_NE(message.find("failed after 2 attempts"), std::string::npos) << message;
    EXPECT_NE(message.find("raise the timeout"), std::string::npos) << message;
    EXPECT_EQ(embedder.requests_sent(), 2u);
    EXPECT_EQ(sleeps.size(), 1u);
    EXPECT_LT(elapsed, 2.0);
}

// A loopback port nothing listens on: bound to let the kernel pick a free one, then closed.
// (Stopping the fake server right after starting it races inside cpp-httplib and can hang.)
int closed_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

TEST_F(HttpEmbedderTest, ConnectionRefusedIsRetriedThenFails) {
    auto o = options();
    o.base_url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/v1";
    o.max_retries = 2;
    HttpEmbedder embedder = make(o);
    const auto message = error_message([&] { embedder.embed({"a"}); });
    EXPECT_NE(message.find("failed after 3 attempts"), std::string::npos) << message;
    EXPECT_NE(message.find("check that the server is running at " + o.base_url), std::string::npos) << message;
    EXPECT_EQ(sleeps.size(), 2u);
}

TEST_F(HttpEmbedderTest, MalformedJsonIsRetriedThenSucceeds) {
    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int call) {
        if (call == 0) {
            res.set_content("<html><body>502 Bad Gateway</body></html>", "text/html");
            return;
        }
        FakeServer::answer_normally(req, res);
    });
    HttpEmbedder embedder = make(options());
    expect_rows(embedder.embed({"a"}), {"a"}, 8);
    EXPECT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(sleeps.size(), 1u);
}

TEST_F(HttpEmbedderTest, MalformedJsonFailsAfterRetries) {
    server.set_behaviour([](const httplib::Request&, httplib::Response& res, int) {
        res.set_content(R"({"data": [{"index": 0, "embedding": [0.1, 0.2)", "application/json");
    });
    auto o = options();
    o.max_retries = 2;
    HttpEmbedder embedder = make(o);
    const auto message = error_message([&] { embedder.embed({"a"}); });
    EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
    EXPECT_NE(message.find("failed after 3 attempts"), std::string::npos) << message;
    EXPECT_NE(message.find(R"({"data": [{"index": 0)"), std::string::npos) << message;
    EXPECT_EQ(server.requests().size(), 3u);
}

TEST_F(HttpEmbedderTest, WrongDimensionInOneItemIsAnError) {
    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int) {
        json answer = FakeServer::answer(req, 8);
        answer["data"][1]["embedding"].erase(0);
        FakeServer::send(res, answer);
    });
    HttpEmbedder embedder = make(options());
    const auto message = error_message([&] { embedder.embed(make_texts(3)); });
    EXPECT_NE(message.find("data[1] has dimension 7 but data[0] has dimension 8"), std::string::npos) << message;
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(embedder.dim(), 0u);
}

TEST_F(HttpEmbedderTest, MissingOrRepeatedIndexIsAnError) {
    HttpEmbedder embedder = make(options());
    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int) {
        json answer = FakeServer::answer(req, 8);
        answer["data"][2]["index"] = answer["data"][0]["index"];
        FakeServer::send(res, answer);
    });
    auto message = error_message([&] { embedder.embed(make_texts(3)); });
    EXPECT_NE(message.find("appears more than once"), std::string::npos) << message;

    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int) {
        json answer = FakeServer::answer(req, 8);
        answer["data"].erase(1);
        FakeServer::send(res, answer);
    });
    message = error_message([&] { embedder.embed(make_texts(3)); });
    EXPECT_NE(message.find("sent 3 texts but got 2 embeddings"), std::string::npos) << message;

    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int) {
        json answer = FakeServer::answer(req, 8);
        answer["data"][0].erase("index");
        FakeServer::send(res, answer);
    });
    message = error_message([&] { embedder.embed(make_texts(3)); });
    EXPECT_NE(message.find("data[0] has no integer \"index\""), std::string::npos) << message;

    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int) {
        json answer = FakeServer::answer(req, 8);
        answer["data"][0]["index"] = 3;
        FakeServer::send(res, answer);
    });
    message = error_message([&] { embedder.embed(make_texts(3)); });
    EXPECT_NE(message.find("has index 3, outside 0..2"), std::string::npos) << message;
    EXPECT_EQ(server.requests().size(), 4u);  // none retried
    EXPECT_TRUE(sleeps.empty());
}

TEST_F(HttpEmbedderTest, ZeroOrNonFiniteVectorIsAnError) {
    auto o = options();
    o.batch_size = 2;
    HttpEmbedder embedder = make(o);
    server.set_behaviour([](const httplib::Request& req, httplib::Response& res, int call) {
        json answer = FakeServer::answer(req, 8);
        if (call == 1) {
            for (auto& item : answer["data"]) {
                if (item["index"] == 1) item["embedding"] = std::vector<float>(8, 0.0f);
            }
        }
        FakeServer::send(res, answer);
    });
    auto message = error_message([&] { embedder.embed(make_texts(4)); });
    EXPECT_NE(message.find("index 1 (text 3 of the call) is all zeros"), std::string::npos) << message;
    EXPECT_NE(message.find("texts 2..3"), std::string::npos) << message;

    server.set_behaviour([](const httplib::Request&, httplib::Response& res, int) {
        // 1e39 is a valid JSON number but overflows float32.
        res.set_content(R"({"data":[{"index":0,"embedding":[0.5,1e39]}]})", "application/json");
    });
    HttpEmbedder fresh = make(o);  // `embedder` already knows dimension 8
    message = error_message([&] { fresh.embed({"a"}); });
    EXPECT_NE(message.find("non-finite value at position 1"), std::string::npos) << message;
}

TEST_F(HttpEmbedderTest, DimensionIsFixedAfterTheFirstAnswer) {
    std::size_t dim = 8;
    server.set_behaviour([&dim](const httplib::Request& req, httplib::Response& res, int) {
        FakeServer::answer_normally(req, res, dim);
    });
    HttpEmbedder embedder = make(options());
    expect_rows(embedder.embed({"a"}), {"a"}, 8);
    EXPECT_EQ(embedder.dim(), 8u);
    dim = 16;
    const auto message = error_message([&] { embedder.embed({"b", "c"}); });
    EXPECT_NE(message.find("dimension 16 but this embedder's earlier answers had dimension 8"), std::string::npos)
        << message;
    EXPECT_EQ(embedder.dim(), 8u);
    dim = 8;
    expect_rows(embedder.embed({"b", "c"}), {"b", "c"}, 8);
}

TEST_F(HttpEmbedderTest, RejectsBadOptions) {
    auto o = options();
    o.base_url = "";
    EXPECT_THROW(make(o), novelty::UsageError);
    o = options();
    o.base_url = "127.0.0.1:8080/v1";
    EXPECT_THROW(make(o), novelty::UsageError);
    o = options();
    o.model = "";
    EXPECT_THROW(make(o), novelty::UsageError);
    o = options();
    o.batch_size = 0;
    EXPECT_THROW(make(o), novelty::UsageError);
    o = options();
    o.max_retries = -1;
    EXPECT_THROW(make(o), novelty::UsageError);
    o = options();
    o.timeout_seconds = 0;
    EXPECT_THROW(make(o), novelty::UsageError);
}

TEST(HttpEmbedderOptionsTest, FlagsFirstThenEnvironment) {
    std::map<std::string, std::string> env;
    auto lookup = [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    HttpEmbedderOptions flags;
    flags.base_url = "http://h/v1";

    auto o = novelty::host::http_embedder_options_from_env(flags, lookup);
    EXPECT_EQ(o.api_key, "");
    EXPECT_EQ(o.model, "");
    EXPECT_EQ(o.base_url, "http://h/v1");

    env["OPENAI_API_KEY"] = "openai-key";
    env["NOVELTY_EMBED_MODEL"] = "env-model";
    o = novelty::host::http_embedder_options_from_env(flags, lookup);
    EXPECT_EQ(o.api_key, "openai-key");
    EXPECT_EQ(o.model, "env-model");

    env["NOVELTY_EMBED_API_KEY"] = "novelty-key";
    o = novelty::host::http_embedder_options_from_env(flags, lookup);
    EXPECT_EQ(o.api_key, "novelty-key");

    env["NOVELTY_EMBED_API_KEY"] = "";  // empty counts as unset
    o = novelty::host::http_embedder_options_from_env(flags, lookup);
    EXPECT_EQ(o.api_key, "openai-key");

    flags.api_key = "flag-key";
    flags.model = "flag-model";
    o = novelty::host::http_embedder_options_from_env(flags, lookup);
    EXPECT_EQ(o.api_key, "flag-key");
    EXPECT_EQ(o.model, "flag-model");
}

}  // namespace
