// LlmRewriter (query expansion and HyDE through ChatClient) against the in-process fake server:
// strict answer parsing, the request carrying the query, many queries in flight at once, the
// repair round, and failures confined to their own query.
#include "fake_llm_server.hpp"

#include "novelty/util/error.hpp"
#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/llm/llm_rewriter.hpp"
#include "novelty_host/llm/prompts.hpp"

#include <gtest/gtest.h>

using novelty::host::ChatClient;
using novelty::host::ChatClientOptions;
using novelty::host::LlmRewriter;
using novelty::host::parse_rewrite_answer;
using novelty::host::RewriteKind;
using novelty::test::FakeLlmServer;
using json = nlohmann::json;

namespace {

ChatClientOptions options_for(const FakeLlmServer& server, std::size_t concurrency = 8) {
    ChatClientOptions o;
    o.base_url = server.base_url();
    o.model = "fake-model";
    o.concurrency = concurrency;
    o.max_retries = 0;
    o.timeout_seconds = 5;
    o.initial_backoff_seconds = 0.01;
    o.max_backoff_seconds = 0.05;
    return o;
}

/// The query text of a rewrite request ("Research question: QUERY", up to the blank line).
std::string query_of(const json& body) {
    const std::string user = body["messages"][1]["content"].get<std::string>();
    const std::string marker = "Research question: ";
    if (user.compare(0, marker.size(), marker) != 0) return {};
    return user.substr(marker.size(), user.find("\n\n") == std::string::npos ? std::string::npos
                                                                             : user.find("\n\n") - marker.size());
}

}  // namespace

TEST(RewriteAnswer, ParsesStrictlyAndKeepsAtMostN) {
    std::vector<std::string> out;
    EXPECT_FALSE(parse_rewrite_answer("{\"rewrites\": [\" a \", \"b\"]}", RewriteKind::expand, 5, out));
    EXPECT_EQ(out, (std::vector<std::string>{"a", "b"}));
    EXPECT_FALSE(parse_rewrite_answer("```json\n{\"abstracts\": [\"x\", \"y\", \"z\"], \"note\": 1}\n```", RewriteKind::hyde, 2, out));
    EXPECT_EQ(out, (std::vector<std::string>{"x", "y"}));  // beyond n dropped, extra keys ignored
    // The key must match the kind.
    EXPECT_TRUE(parse_rewrite_answer("{\"rewrites\": [\"a\"]}", RewriteKind::hyde, 2, out));
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(parse_rewrite_answer("{\"rewrites\": []}", RewriteKind::expand, 2, out));
    EXPECT_TRUE(parse_rewrite_answer("{\"rewrites\": [\"a\", 3]}", RewriteKind::expand, 2, out));
    EXPECT_TRUE(parse_rewrite_answer("{\"rewrites\": [\"a\", \"  \"]}", RewriteKind::expand, 2, out));
    // A small model that echoes the prompt's format gives "..." placeholders: not texts.
    const auto placeholder = parse_rewrite_answer("{\"rewrites\": [\"...\", \"...\"]}", RewriteKind::expand, 2, out);
    ASSERT_TRUE(placeholder);
    EXPECT_NE(placeholder->find("placeholder"), std::string::npos) << *placeholder;
    EXPECT_TRUE(parse_rewrite_answer("{\"abstracts\": [\"\u2026\"]}", RewriteKind::hyde, 2, out));
    EXPECT_FALSE(parse_rewrite_answer("{\"abstracts\": [\"\u00c9tude des r\u00e9seaux\"]}", RewriteKind::hyde, 2, out));
    EXPECT_TRUE(parse_rewrite_answer("{\"continuation\": \" ... \"}", RewriteKind::continue_, 1, out));
    EXPECT_TRUE(parse_rewrite_answer("{\"rewrites\": \"a\"}", RewriteKind::expand, 2, out));
    EXPECT_TRUE(parse_rewrite_answer("Sure! {\"rewrites\": [\"a\"]}", RewriteKind::expand, 2, out));
    EXPECT_TRUE(parse_rewrite_answer("[\"a\"]", RewriteKind::expand, 2, out));
    const auto problem = parse_rewrite_answer("{\"queries\": [\"a\"]}", RewriteKind::expand, 2, out);
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find("\"rewrites\""), std::string::npos) << *problem;
}

TEST(LlmRewriter, EveryRequestCarriesItsQueryAndManyAreInFlightAtOnce) {
    FakeLlmServer server;
    server.set_delay_ms(30);
    server.set_behaviour([](const json& body, httplib::Response& res, int) {
        const json answer = {{"rewrites", {"first about " + query_of(body), "second about " + query_of(body), "third"}}};
        res.set_content(FakeLlmServer::completion(answer.dump()), "application/json");
        return true;
    });
    ChatClient client(options_for(server, 8));
    LlmRewriter rewriter(client, RewriteKind::expand);
    EXPECT_EQ(rewriter.name(), "expand");
    std::vector<std::string> queries;
    for (int i = 0; i < 16; ++i) queries.push_back("query number " + std::to_string(i));
    const auto results = rewriter.rewrite_all(queries, 2);
    ASSERT_EQ(results.size(), queries.size());
    for (std::size_t i = 0; i < queries.size(); ++i) {
        ASSERT_TRUE(results[i].ok()) << results[i].error;
        EXPECT_EQ(results[i].texts, (std::vector<std::string>{"first about " + queries[i], "second about " + queries[i]}));
    }
    // Submitted together: more than one request was open at the server at some moment.
    EXPECT_GE(server.max_in_flight(), 2);
    EXPECT_LE(server.max_in_flight(), 8);
    const auto bodies = server.bodies();
    ASSERT_EQ(bodies.size(), queries.size());
    for (const auto& body : bodies) {
        EXPECT_EQ(body["model"], "fake-model");
        EXPECT_EQ(body["messages"][0]["content"], std::string(novelty::host::prompt_text("expand_query")));
        EXPECT_NE(body["messages"][1]["content"].get<std::string>().find("Number of queries: 2"), std::string::npos);
        EXPECT_EQ(body["response_format"]["type"], "json_object");
    }
    EXPECT_EQ(client.usage().at("expand").calls, queries.size());
    // n = 0 asks nothing.
    EXPECT_TRUE(rewriter.rewrite_all(queries, 0)[0].texts.empty());
    EXPECT_EQ(server.n_requests(), queries.size());
}

TEST(LlmRewriter, HydeRepairsAnInvalidAnswerOnce) {
    FakeLlmServer server;
    server.set_behaviour([](const json& body, httplib::Response& res, int) {
        // A first answer under the wrong key; the repair round (an assistant turn) answers right.
        const bool repair = body["messages"].size() > 2;
        const json answer = repair ? json{{"abstracts", {"We study " + query_of(body)}}} : json{{"rewrites", {"x"}}};
        res.set_content(FakeLlmServer::completion(answer.dump()), "application/json");
        return true;
    });
    ChatClient client(options_for(server));
    LlmRewriter rewriter(client, RewriteKind::hyde);
    const auto texts = rewriter.rewrite("sparse attention", 3);
    EXPECT_EQ(texts, (std::vector<std::string>{"We study sparse attention"}));
    const auto bodies = server.bodies();
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_EQ(bodies[0]["messages"][0]["content"], std::string(novelty::host::prompt_text("hyde_abstracts")));
    EXPECT_EQ(bodies[1]["messages"][2]["role"], "assistant");
    EXPECT_NE(bodies[1]["messages"][3]["content"].get<std::string>().find("\"abstracts\""), std::string::npos);
    EXPECT_EQ(client.usage().at("hyde").calls, 1u);
    EXPECT_EQ(client.usage().at("hyde-repair").calls, 1u);
}

TEST(LlmRewriter, AFailedQueryIsReportedAndTheOthersStillWork) {
    FakeLlmServer server;
    server.set_behaviour([](const json& body, httplib::Response& res, int) {
        const std::string query = query_of(body);
        if (query == "broken") {
            res.status = 500;
            res.set_content("internal trouble", "text/plain");
        } else if (query == "garbled") {
            res.set_content(FakeLlmServer::completion("not json at all"), "application/json");
        } else {
            res.set_content(FakeLlmServer::completion(json{{"rewrites", {query + " again"}}}.dump()), "application/json");
        }
        return true;
    });
    ChatClient client(options_for(server));
    LlmRewriter rewriter(client, RewriteKind::expand);
    const auto results = rewriter.rewrite_all({"good one", "broken", "garbled", "good two"}, 3);
    ASSERT_EQ(results.size(), 4u);
    EXPECT_TRUE(results[0].ok());
    EXPECT_EQ(results[0].texts, (std::vector<std::string>{"good one again"}));
    EXPECT_FALSE(results[1].ok());
    EXPECT_TRUE(results[1].texts.empty());
    EXPECT_NE(results[1].error.find("500"), std::string::npos) << results[1].error;
    EXPECT_FALSE(results[2].ok());
    EXPECT_NE(results[2].error.find("after one repair"), std::string::npos) << results[2].error;
    EXPECT_EQ(results[3].texts, (std::vector<std::string>{"good two again"}));
    EXPECT_THROW(rewriter.rewrite("broken", 2), novelty::Error);
}

TEST(RewritePrompts, AreScholarCatalystsHydeAndSingleQueryExpansion) {
    using novelty::host::prompt_text;
    using novelty::host::rewrite_prompt;
    // The user message prefixes the question with "Research question:", as the paper's.
    EXPECT_EQ(rewrite_prompt(RewriteKind::hyde, "q text", 5), "Research question: q text\n\nNumber of abstracts: 5");
    EXPECT_EQ(rewrite_prompt(RewriteKind::expand, "q text", 3), "Research question: q text\n\nNumber of queries: 3");
    EXPECT_EQ(rewrite_prompt(RewriteKind::continue_, "q text", 1), "Research question: q text");
    // HyDE asks for prior papers from distinct angles, adjacent fields included, without
    // solving the question or naming real papers.
    const std::string hyde(prompt_text("hyde_abstracts"));
    for (const char* part : {"earlier papers", "own angle", "adjacent field", "do not solve the research question",
                             "names no real paper"})
        EXPECT_NE(hyde.find(part), std::string::npos) << part;
    EXPECT_EQ(hyde.find("would address"), std::string::npos);
    const std::string single(prompt_text("expand_continuation"));
    EXPECT_NE(single.find("continue"), std::string::npos);
    EXPECT_NE(single.find("\"continuation\""), std::string::npos);
}

TEST(LlmRewriter, SingleQueryExpansionAsksForOneContinuation) {
    std::vector<std::string> out;
    EXPECT_FALSE(parse_rewrite_answer("{\"continuation\": \"  more words \"}", RewriteKind::continue_, 1, out));
    EXPECT_EQ(out, (std::vector<std::string>{"more words"}));
    EXPECT_TRUE(parse_rewrite_answer("{\"continuation\": [\"a\"]}", RewriteKind::continue_, 1, out));
    EXPECT_TRUE(parse_rewrite_answer("{\"continuation\": \" \"}", RewriteKind::continue_, 1, out));
    EXPECT_TRUE(parse_rewrite_answer("{\"rewrites\": [\"a\"]}", RewriteKind::continue_, 1, out));

    FakeLlmServer server;
    server.set_behaviour([](const json& body, httplib::Response& res, int) {
        const json answer = {{"continuation", "and more about " + query_of(body)}};
        res.set_content(FakeLlmServer::completion(answer.dump()), "application/json");
        return true;
    });
    ChatClient client(options_for(server));
    LlmRewriter rewriter(client, RewriteKind::continue_);
    EXPECT_EQ(rewriter.name(), "expand-single");
    EXPECT_EQ(rewriter.rewrite("sparse attention", 1), (std::vector<std::string>{"and more about sparse attention"}));
    const auto bodies = server.bodies();
    ASSERT_EQ(bodies.size(), 1u);
    EXPECT_EQ(bodies[0]["messages"][0]["content"], std::string(novelty::host::prompt_text("expand_continuation")));
    EXPECT_EQ(client.usage().at("expand-single").calls, 1u);
}
