// LLM answers are checked before they count or are kept: a verdict must name one of its
// candidate papers as the source, and an answer that fails validation is never cached.
#include "fake_llm_server.hpp"
#include "test_util.hpp"

#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/claimnov/claim_stages.hpp"
#include "novelty_host/claimnov/pool_claim_store.hpp"
#include "llm/response_cache.hpp"

#include <gtest/gtest.h>

#include <sqlite3.h>

#include <future>

using novelty::host::ChatClient;
using novelty::host::ChatClientOptions;
using novelty::test::FakeLlmServer;
using json = nlohmann::json;

namespace {

ChatClientOptions options_for(const FakeLlmServer& server, const std::string& cache = "") {
    ChatClientOptions o;
    o.base_url = server.base_url() + "/";
    o.model = "fake-model";
    o.concurrency = 2;
    o.max_retries = 1;
    o.timeout_seconds = 5;
    o.initial_backoff_seconds = 0.01;
    o.max_backoff_seconds = 0.02;
    o.cache_path = cache;
    return o;
}

// One claim with candidates p1 and p2, both strongly entailed.
novelty::host::Profile profile() {
    novelty::host::Profile p;
    p.proposal = {"", "Idea", "An idea."};
    p.novelty = 0.1;
    novelty::host::ProfileClaim c;
    c.claim = {"claim", novelty::ClaimDimension::problem, "", ""};
    c.anticipation = 1;
    c.candidates.push_back({{"p1", "Paper one", "Abstract one."}, "prior claim", "", "", 0.9f, 5});
    c.candidates.push_back({{"p2", "Paper two", "Abstract two."}, "prior claim", "", "", 0.8f, 5});
    p.claims.push_back(c);
    return p;
}

novelty::host::Verdict judge_once(ChatClient& client) {
    auto judge = novelty::host::make_llm_judge(client);
    novelty::host::Verdict rule;
    rule.fail = true;
    rule.source = "p1";
    std::promise<novelty::host::Verdict> got;
    judge->judge(profile(), rule, [&](novelty::host::Verdict v) { got.set_value(v); });
    return got.get_future().get();
}

}  // namespace

TEST(LlmValidation, AVerdictNamingAPaperThatIsNotACandidateIsAnErrorNotAFail) {
    FakeLlmServer server;
    std::string source = "ghost-paper";
    server.set_behaviour([&](const json&, httplib::Response& res, int) {
        res.set_content(FakeLlmServer::completion(json{{"decision", "fail"}, {"source", source}, {"established", {0}},
                                                       {"rationale", "r"}}
                                                      .dump()),
                        "application/json");
        return true;
    });
    ChatClient client(options_for(server));
    const auto bad = judge_once(client);
    EXPECT_EQ(bad.judge, "rule") << "the LLM's verdict must not be recorded as a valid fail";
    EXPECT_NE(bad.error.find("'ghost-paper', which is not one of the candidate papers"), std::string::npos) << bad.error;
    EXPECT_EQ(server.n_requests(), 2u);  // the answer and one repair
    const auto repair = server.bodies()[1]["messages"].back()["content"].get<std::string>();
    EXPECT_NE(repair.find("'p1', 'p2'"), std::string::npos) << repair;

    source = "p2";
    const auto good = judge_once(client);
    EXPECT_EQ(good.judge, "llm:fake-model");
    EXPECT_TRUE(good.error.empty()) << good.error;
    EXPECT_EQ(good.source.value_or(""), "p2");

    novelty::host::Verdict pass;
    EXPECT_FALSE(novelty::host::verdict_source_problem(pass, profile()));
}

TEST(LlmValidation, AnswersThatFailValidationAreNeverCached) {
    FakeLlmServer server;
    novelty::test::TempDir tmp;
    const std::string cache = tmp.file("llm.sqlite");
    std::atomic<bool> valid{false};
    server.set_behaviour([&](const json&, httplib::Response& res, int) {
        res.set_content(FakeLlmServer::completion(valid ? "{\"level\": 4}" : "{\"level\": 9}"), "application/json");
        return true;
    });
    const novelty::Claim claim{"c", novelty::ClaimDimension::problem, "", ""};
    auto grade = [&] {
        ChatClient client(options_for(server, cache));
        auto grader = novelty::host::make_llm_grader(client);
        std::promise<novelty::host::Grade> got;
        grader->grade({"", "T", "A"}, claim, {"p1", "T2", "A2"}, "c2", 0.5f, [&](novelty::host::Grade g) { got.set_value(g); });
        return got.get_future().get();
    };
    const auto bad = grade();
    EXPECT_EQ(bad.level, 0);
    EXPECT_EQ(server.n_requests(), 2u);
    // A re-run asks again (nothing invalid was kept), and now gets a valid answer ...
    valid = true;
    const auto good = grade();
    EXPECT_EQ(good.level, 4);
    EXPECT_EQ(server.n_requests(), 3u);
    // ... which is kept: the next run asks nothing.
    const auto cached = grade();
    EXPECT_EQ(cached.level, 4);
    EXPECT_EQ(server.n_requests(), 3u);

    // A request with a cacheable test never stores what the test refuses, and ignores such a
    // stored answer (written before the test existed).
    valid = false;
    ChatClient client(options_for(server, cache));
    novelty::host::ChatRequest plain;
    plain.messages = {{"user", "x"}};
    EXPECT_TRUE(client.submit(plain).get().ok);  // stored: no test
    const std::size_t before = server.n_requests();
    plain.cacheable = [](const std::string& content) { return content.find('9') == std::string::npos; };
    const auto again = client.submit(plain).get();
    EXPECT_FALSE(again.from_cache);
    EXPECT_EQ(server.n_requests(), before + 1);
}

namespace {

void sql(const std::string& path, const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
}

}  // namespace

TEST(LlmValidation, DamagedClaimAndAnswerCachesAreNeverUsed) {
    novelty::test::TempDir tmp;
    const std::string claims_path = tmp.file("claims.sqlite");
    const std::vector<novelty::Claim> claims{{"uses graphs", novelty::ClaimDimension::methodology, "a", "v"}};
    {
        novelty::host::PoolClaimStore store(claims_path);
        store.put_claims("llm:m", "p1", claims);
        store.put_claims("llm:m", "p2", claims);
        store.put_vectors("e", {"uses graphs"}, {0.6f, 0.8f}, 2);
    }
    sql(claims_path, "UPDATE claims SET text = 'uses trees' WHERE paper_id = 'p1';"
                     "UPDATE vectors SET data = x'0000803f00000000';");
    {
        novelty::host::PoolClaimStore store(claims_path);
        EXPECT_FALSE(store.claims("llm:m", "p1")) << "damaged claims are extracted again";
        ASSERT_TRUE(store.claims("llm:m", "p2"));
        EXPECT_EQ(store.claims("llm:m", "p2")->at(0).text, "uses graphs");
        EXPECT_FALSE(store.vector("e", "uses graphs")) << "a damaged vector is embedded again";
        store.put_vectors("e", {"uses graphs"}, {0.6f, 0.8f}, 2);
        EXPECT_TRUE(store.vector("e", "uses graphs"));
    }
    // Entries from before checksums existed are still read.
    sql(claims_path, "UPDATE extracted SET claims_sha256 = NULL; UPDATE vectors SET data_sha256 = NULL;");
    {
        novelty::host::PoolClaimStore store(claims_path);
        EXPECT_TRUE(store.claims("llm:m", "p1"));
        EXPECT_TRUE(store.vector("e", "uses graphs"));
    }

    const std::string answers = tmp.file("answers.sqlite");
    {
        novelty::host::detail::ResponseCache cache(answers);
        cache.put("k1", "m", "entail", {"{\"level\": 4}", 1, 1});
        cache.put("k2", "m", "entail", {"{\"level\": 2}", 1, 1});
    }
    sql(answers, "UPDATE responses SET content = '{\"level\": 5}' WHERE key = 'k1';");
    novelty::host::detail::ResponseCache cache(answers);
    EXPECT_FALSE(cache.get("k1")) << "a damaged answer is asked again";
    ASSERT_TRUE(cache.get("k2"));
    EXPECT_EQ(cache.get("k2")->content, "{\"level\": 2}");
}
