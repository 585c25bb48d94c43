// ChatClient against the in-process fake server: request format, the concurrency bound, retries
// (429 with Retry-After, 500, malformed JSON, timeouts), failures that are not retried, the
// response cache, token accounting, cancellation, and the strict-JSON repair round.
#include "fake_llm_server.hpp"
#include "test_util.hpp"

#include "novelty/util/error.hpp"
#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/claimnov/claim_stages.hpp"
#include "novelty_host/llm/prompts.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

using novelty::host::ChatClient;
using novelty::host::ChatClientOptions;
using novelty::host::ChatRequest;
using novelty::test::FakeLlmServer;
using json = nlohmann::json;

namespace {

ChatClientOptions fast_options(const FakeLlmServer& server) {
    ChatClientOptions o;
    o.base_url = server.base_url() + "/";
    o.model = "fake-model";
    o.api_key = "secret";
    o.concurrency = 4;
    o.max_retries = 3;
    o.timeout_seconds = 5;
    o.initial_backoff_seconds = 0.01;
    o.max_backoff_seconds = 0.05;
    return o;
}

ChatRequest hello(const std::string& text = "hello", const std::string& stage = "test") {
    ChatRequest r;
    r.messages = {{"system", "be brief"}, {"user", text}};
    r.stage = stage;
    r.max_tokens = 32;
    return r;
}

}  // namespace

TEST(ChatClient, SendsAnOpenAIChatRequestAndCountsTokens) {
    FakeLlmServer server;
    server.set_behaviour([](const json&, httplib::Response& res, int) {
        res.set_content(FakeLlmServer::completion("{\"ok\": true}", 7, 3), "application/json");
        return true;
    });
    ChatClient client(fast_options(server));
    const auto result = client.submit(hello()).get();
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_EQ(result.content, "{\"ok\": true}");
    EXPECT_EQ(result.attempts, 1);
    const auto bodies = server.bodies();
    ASSERT_EQ(bodies.size(), 1u);
    EXPECT_EQ(bodies[0]["model"], "fake-model");
    EXPECT_EQ(bodies[0]["messages"][1]["role"], "user");
    EXPECT_EQ(bodies[0]["messages"][1]["content"], "hello");
    EXPECT_EQ(bodies[0]["temperature"], 0.0);
    EXPECT_EQ(bodies[0]["max_tokens"], 32);
    EXPECT_EQ(bodies[0]["response_format"]["type"], "json_object");
    EXPECT_EQ(server.authorization()[0], "Bearer secret");
    const auto usage = client.usage();
    EXPECT_EQ(usage.at("test").calls, 1u);
    EXPECT_EQ(usage.at("test").prompt_tokens, 7u);
    EXPECT_EQ(usage.at("total").completion_tokens, 3u);
    const std::string report = usage_report(client);
    EXPECT_NE(report.find("novelty: llm fake-model test: 1 calls, 0 cached, 0 failed, 7+3 tokens\n"), std::string::npos)
        << report;
    EXPECT_NE(report.find("novelty: llm fake-model total: 1 calls"), std::string::npos) << report;
}

TEST(ChatClient, NeverExceedsTheConcurrencyLimit) {
    FakeLlmServer server;
    server.set_delay_ms(20);
    auto options = fast_options(server);
    options.concurrency = 3;
    ChatClient client(options);
    std::vector<ChatRequest> requests;
    for (int i = 0; i < 24; ++i) requests.push_back(hello("q" + std::to_string(i)));
    const auto results = client.run_all(requests);
    ASSERT_EQ(results.size(), 24u);
    for (std::size_t i = 0; i < results.size(); ++i) EXPECT_TRUE(results[i].ok) << results[i].error;
    EXPECT_LE(server.max_in_flight(), 3);
    EXPECT_GE(server.max_in_flight(), 2);  // and it does run requests side by side
}

TEST(ChatClient, RetriesA429HonouringRetryAfterThenA500ThenMalformedJson) {
    FakeLlmServer server;
    server.set_behaviour([](const json&, httplib::Response& res, int call) {
        if (call == 0) {
            res.status = 429;
            res.set_header("Retry-After", "0");
            res.set_content("slow down", "text/plain");
            return true;
        }
        if (call == 1) {
            res.status = 500;
            res.set_content("oops", "text/plain");
            return true;
        }
        if (call == 2) {
            res.set_content("{\"choices\": [", "application/json");
            return true;
        }
        return false;
    });
    ChatClient client(fast_options(server));
    const auto result = client.submit(hello()).get();
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_EQ(result.attempts, 4);
    EXPECT_EQ(client.usage().at("test").http_attempts, 4u);
}

TEST(ChatClient, RetryAfterDelaysTheNextAttempt) {
    FakeLlmServer server;
    server.set_behaviour([](const json&, httplib::Response& res, int call) {
        if (call > 0) return false;
        res.status = 429;
        res.set_header("Retry-After", "0.3");
        return true;
    });
    auto options = fast_options(server);
    options.max_backoff_seconds = 5;
    ChatClient client(options);
    const auto start = std::chrono::steady_clock::now();
    const auto result = client.submit(hello()).get();
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_GE(waited, 0.29);  // a lower bound only: the server asked for 0.3 s
}

TEST(ChatClient, GivesUpAfterTheRetriesAndDoesNotRetryA400) {
    FakeLlmServer server;
    server.set_behaviour([](const json& body, httplib::Response& res, int) {
        res.status = body["messages"][1]["content"] == "bad" ? 400 : 503;
        res.set_content("nope", "text/plain");
        return true;
    });
    ChatClient client(fast_options(server));
    const auto unavailable = client.submit(hello("x")).get();
    EXPECT_FALSE(unavailable.ok);
    EXPECT_EQ(unavailable.attempts, 4);
    EXPECT_NE(unavailable.error.find("HTTP 503"), std::string::npos) << unavailable.error;
    const auto bad = client.submit(hello("bad")).get();
    EXPECT_FALSE(bad.ok);
    EXPECT_EQ(bad.attempts, 1);
    EXPECT_EQ(bad.http_status, 400);
    EXPECT_EQ(bad.error.find("secret"), std::string::npos);
    EXPECT_EQ(client.usage().at("test").failures, 2u);
}

TEST(ChatClient, TimesOutSlowAnswersAndRetries) {
    FakeLlmServer server;
    std::atomic<int> calls{0};
    server.set_behaviour([&](const json& body, httplib::Response& res, int) {
        if (calls++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
        FakeLlmServer::answer(body, res);
        res.set_content(FakeLlmServer::completion("{}"), "application/json");
        return true;
    });
    auto options = fast_options(server);
    options.timeout_seconds = 0.1;
    ChatClient client(options);
    const auto result = client.submit(hello()).get();
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_EQ(result.attempts, 2);
}

TEST(ChatClient, ReportsAnswersWithoutContent) {
    FakeLlmServer server;
    server.set_behaviour([](const json&, httplib::Response& res, int) {
        res.set_content("{\"data\": []}", "application/json");
        return true;
    });
    ChatClient client(fast_options(server));
    const auto result = client.submit(hello()).get();
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.error.find("choices[0].message.content"), std::string::npos);
}

TEST(ChatClient, CachesAnswersAcrossClients) {
    FakeLlmServer server;
    novelty::test::TempDir tmp;
    auto options = fast_options(server);
    options.cache_path = tmp.file("cache.sqlite");
    {
        ChatClient client(options);
        EXPECT_TRUE(client.submit(hello("a")).get().ok);
        EXPECT_FALSE(client.submit(hello("a")).get().from_cache == false);
    }
    EXPECT_EQ(server.n_requests(), 1u);
    ChatClient again(options);
    const auto hit = again.submit(hello("a")).get();
    EXPECT_TRUE(hit.ok);
    EXPECT_TRUE(hit.from_cache);
    EXPECT_EQ(again.usage().at("test").cache_hits, 1u);
    // Another parameter is another key.
    ChatRequest other = hello("a");
    other.temperature = 0.7;
    EXPECT_NE(again.cache_key(other), again.cache_key(hello("a")));
    EXPECT_FALSE(again.submit(other).get().from_cache);
    EXPECT_EQ(server.n_requests(), 2u);
}

TEST(ChatClient, CancelEndsEverythingPending) {
    FakeLlmServer server;
    server.set_delay_ms(200);
    auto options = fast_options(server);
    options.concurrency = 1;
    ChatClient client(options);
    std::vector<std::future<novelty::host::ChatResult>> futures;
    for (int i = 0; i < 5; ++i) futures.push_back(client.submit(hello(std::to_string(i))));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    client.cancel();
    int cancelled = 0;
    for (auto& f : futures) cancelled += f.get().cancelled ? 1 : 0;
    EXPECT_EQ(cancelled, 5);
    EXPECT_TRUE(client.submit(hello("late")).get().cancelled);
}

TEST(ChatClient, OptionsComeFromTheEnvironmentWhenFlagsAreEmpty) {
    const std::map<std::string, std::string> env = {{"NOVELTY_LLM_BASE_URL", "http://h:1/v1"},
                                                    {"OPENAI_API_KEY", "k"},
                                                    {"NOVELTY_LLM_MODEL", "m"},
                                                    {"NOVELTY_LLM_CONCURRENCY", "16"}};
    auto lookup = [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    const auto o = novelty::host::chat_options_from_env({}, false, lookup);
    EXPECT_EQ(o.base_url, "http://h:1/v1");
    EXPECT_EQ(o.api_key, "k");
    EXPECT_EQ(o.model, "m");
    EXPECT_EQ(o.concurrency, 16u);
    ChatClientOptions given;
    given.concurrency = 2;
    EXPECT_EQ(novelty::host::chat_options_from_env(given, true, lookup).concurrency, 2u);
    EXPECT_THROW(ChatClient(ChatClientOptions{}), novelty::UsageError);
}

TEST(ClaimStages, InvalidAnswersGetOneRepairThenAreRecorded) {
    FakeLlmServer server;
    std::atomic<int> mode{0};
    server.set_behaviour([&](const json& body, httplib::Response& res, int) {
        const bool repair = body["messages"].size() > 2;
        if (mode == 0) {  // bad once, fine after the repair
            res.set_content(FakeLlmServer::completion(repair ? "{\"level\": 4, \"reason\": \"r\"}" : "level four"), "application/json");
        } else {  // always bad
            res.set_content(FakeLlmServer::completion("{\"level\": 9}"), "application/json");
        }
        return true;
    });
    ChatClient client(fast_options(server));
    auto grader = novelty::host::make_llm_grader(client);
    novelty::Claim claim{"c", novelty::ClaimDimension::problem, "", ""};
    std::promise<novelty::host::Grade> first;
    grader->grade({"", "T", "A"}, claim, {"p1", "T2", "A2"}, "c2", 0.5f, [&](novelty::host::Grade g) { first.set_value(g); });
    const auto g = first.get_future().get();
    EXPECT_EQ(g.level, 4);
    EXPECT_TRUE(g.error.empty());
    const auto bodies = server.bodies();
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_EQ(bodies[1]["messages"][2]["content"], "level four");
    mode = 1;
    std::promise<novelty::host::Grade> second;
    grader->grade({"", "T", "B"}, claim, {"p1", "T2", "A2"}, "c2", 0.5f, [&](novelty::host::Grade g) { second.set_value(g); });
    const auto bad = second.get_future().get();
    EXPECT_EQ(bad.level, 0);
    EXPECT_NE(bad.error.find("invalid answer after one repair"), std::string::npos) << bad.error;
}

TEST(ClaimStages, StrictParsing) {
    std::vector<novelty::Claim> claims;
    EXPECT_FALSE(novelty::host::parse_extraction_answer(
        "```json\n{\"claims\": [{\"text\": \"t\", \"dimension\": \"Result\", \"attribute\": \"a\", \"value\": \"v\"}]}\n```", claims));
    ASSERT_EQ(claims.size(), 1u);
    EXPECT_EQ(claims[0].dimension, novelty::ClaimDimension::result);
    EXPECT_TRUE(novelty::host::parse_extraction_answer("{\"claims\": []}", claims));
    EXPECT_TRUE(novelty::host::parse_extraction_answer("{\"claims\": [{\"text\": \"t\", \"dimension\": \"idea\"}]}", claims));
    EXPECT_TRUE(novelty::host::parse_extraction_answer("Sure! {\"claims\": []}", claims));
    const auto placeholder = novelty::host::parse_extraction_answer(
        "{\"claims\": [{\"text\": \"...\", \"dimension\": \"problem\", \"attribute\": \"...\", \"value\": \"...\"}]}", claims);
    ASSERT_TRUE(placeholder);
    EXPECT_NE(placeholder->find("placeholder"), std::string::npos) << *placeholder;
    novelty::host::Verdict v;
    EXPECT_FALSE(novelty::host::parse_verdict_answer(
        "{\"decision\": \"fail\", \"source\": \"p3\", \"established\": [1, 0, 1], \"rationale\": \"r\"}", 2, v));
    EXPECT_TRUE(v.fail);
    EXPECT_EQ(v.source.value_or(""), "p3");
    EXPECT_EQ(v.established, (std::vector<std::size_t>{0, 1}));
    EXPECT_TRUE(novelty::host::parse_verdict_answer("{\"decision\": \"fail\", \"established\": [2]}", 2, v));
    EXPECT_TRUE(novelty::host::parse_verdict_answer("{\"decision\": \"maybe\"}", 2, v));
    // The prompts are compiled in.
    EXPECT_NE(novelty::host::prompt_text("extract_claims").find("\"dimension\""), std::string_view::npos);
    EXPECT_THROW(novelty::host::prompt_text("nope"), novelty::UsageError);
}
