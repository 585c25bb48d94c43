// The ClaimNov pipeline end to end against the fake LLM server with a deterministic embedder:
// a copied proposal fails naming its source, a new one passes, the number of entailment calls is
// the retrieval depth, pool claims are extracted once, and a run killed part-way resumes without
// repeating finished proposals or losing any.
#include "fake_llm_server.hpp"
#include "hash_embedder.hpp"
#include "test_util.hpp"

#include "novelty/encoder/embedder.hpp"
#include "novelty_host/claimnov/claimnov_pipeline.hpp"
#include "novelty_host/jobs/resumable_output.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

using namespace novelty;
using namespace novelty::host;
using novelty::test::FakeLlmServer;
using novelty::test::HashEmbedder;
using json = nlohmann::json;

namespace {

std::vector<PoolPaper> make_pool(std::size_t n) {
    std::vector<PoolPaper> pool;
    for (std::size_t i = 0; i < n; ++i)
        pool.push_back({i, "p" + std::to_string(i), "Paper " + std::to_string(i),
                        "We study topic " + std::to_string(i) + " with care. We propose method alpha" + std::to_string(i) +
                            " for it"});
    return pool;
}

ChatClientOptions options_for(const FakeLlmServer& server) {
    ChatClientOptions o;
    o.base_url = server.base_url();
    o.model = "fake";
    o.concurrency = 8;
    o.initial_backoff_seconds = 0.01;
    return o;
}

std::size_t count_with(const std::vector<json>& bodies, const std::string& system_part, const std::string& user_part = "") {
    std::size_t n = 0;
    for (const auto& b : bodies)
        if (b["messages"][0]["content"].get<std::string>().find(system_part) != std::string::npos &&
            b["messages"][1]["content"].get<std::string>().find(user_part) != std::string::npos)
            ++n;
    return n;
}

}  // namespace

TEST(ClaimsPipeline, CopiedProposalFailsNamingItsSourceAndNewOnePasses) {
    FakeLlmServer server;
    ChatClient client(options_for(server));
    auto extractor = make_llm_extractor(client);
    auto grader = make_llm_grader(client);
    auto judge = make_llm_judge(client);
    HashEmbedder embedder;
    ClaimNovPipeline pipeline(*extractor, *grader, *judge, embedder);
    PoolClaimStore store(":memory:");
    const PoolStats stats = pipeline.prepare_pool(make_pool(12), store);
    EXPECT_EQ(stats.papers, 12u);
    EXPECT_EQ(stats.claims, 24u);  // two sentences each
    EXPECT_EQ(count_with(server.bodies(), "contribution claims"), 12u);

    std::vector<PipelineProposal> proposals(2);
    proposals[0].id = "copy";
    proposals[0].text = {"", "Paper 3", "We study topic 3 with care. We propose method alpha3 for it"};
    proposals[1].id = "new";
    proposals[1].text = {"", "Other", "Something unrelated entirely"};
    std::map<std::string, ProposalResult> results;
    pipeline.run(proposals, [&](const ProposalResult& r) { results[r.id] = r; });
    ASSERT_EQ(results.size(), 2u);
    const ProposalResult& copy = results["copy"];
    ASSERT_TRUE(copy.error.empty()) << copy.error;
    ASSERT_EQ(copy.claims.size(), 2u);
    // All claims are methodology: n_d = 12 papers, k_d = 10, one claim per paper.
    EXPECT_EQ(copy.claims[0].n_papers, 12u);
    EXPECT_EQ(copy.claims[0].k, 10u);
    ASSERT_EQ(copy.claims[0].candidates.size(), 10u);
    std::set<std::string> papers;
    for (const auto& c : copy.claims[0].candidates) papers.insert(c.paper);
    EXPECT_EQ(papers.size(), 10u);
    EXPECT_EQ(copy.claims[0].candidates[0].paper, "p3");
    EXPECT_EQ(copy.claims[0].candidates[0].level, 5);
    // Both claims fully anticipated by p3 (level 5, then 2s): a = (1 + .5*.25 + ...)/...
    EXPECT_LT(copy.novelty.novelty, 0.5);
    EXPECT_TRUE(copy.verdict.fail);
    EXPECT_EQ(copy.verdict.source.value_or(""), "p3");
    EXPECT_EQ(copy.verdict.judge, "llm:fake");
    EXPECT_EQ(copy.attribution, "p3");
    EXPECT_FALSE(results["new"].verdict.fail);
    // Calls: 2 extractions, (2 + 1) claims x 10 entailments, 2 verdicts.
    const auto bodies = server.bodies();
    EXPECT_EQ(count_with(bodies, "already establishes"), 30u);
    EXPECT_EQ(count_with(bodies, "novel enough"), 2u);
    const std::string line = proposal_result_json(copy, "{\"approximate\": false}");
    const json j = json::parse(line);
    for (const char* key : {"id", "novelty", "claims", "verdict", "approximate"}) EXPECT_TRUE(j.contains(key)) << key;
    for (const char* key : {"text", "dimension", "attribute", "value", "importance", "anticipation", "candidates"})
        EXPECT_TRUE(j["claims"][0].contains(key)) << key;
    for (const char* key : {"paper", "claim", "sim", "level", "e"}) EXPECT_TRUE(j["claims"][0]["candidates"][0].contains(key)) << key;
    for (const char* key : {"decision", "source", "established", "rationale", "judge"}) EXPECT_TRUE(j["verdict"].contains(key)) << key;

    // A second pipeline with the same store extracts no pool paper again.
    const std::size_t before = server.n_requests();
    ClaimNovPipeline again(*extractor, *grader, *judge, embedder);
    EXPECT_EQ(again.prepare_pool(make_pool(12), store).extracted_now, 0u);
    EXPECT_EQ(server.n_requests(), before);
}

TEST(ClaimsPipeline, ExclusionAndCutoffHideTheSource) {
    FakeLlmServer server;
    ChatClient client(options_for(server));
    auto extractor = make_llm_extractor(client);
    auto grader = make_llm_grader(client);
    auto judge = make_rule_judge("rule");
    HashEmbedder embedder;
    ClaimNovPipeline pipeline(*extractor, *grader, *judge, embedder);
    PoolClaimStore store(":memory:");
    pipeline.prepare_pool(make_pool(12), store);
    std::vector<PipelineProposal> proposals(3);
    for (auto& p : proposals) p.text = {"", "Paper 3", "We study topic 3 with care. We propose method alpha3 for it"};
    proposals[0].id = "with";
    proposals[1].id = "excluded";
    proposals[1].excluded_rows = {3};
    proposals[2].id = "cutoff";
    proposals[2].row_limit = 3;
    std::map<std::string, ProposalResult> results;
    pipeline.run(proposals, [&](const ProposalResult& r) { results[r.id] = r; });
    EXPECT_TRUE(results["with"].verdict.fail);
    EXPECT_EQ(results["with"].verdict.source.value_or(""), "p3");
    EXPECT_EQ(results["with"].verdict.judge, "rule");
    for (const char* id : {"excluded", "cutoff"}) {
        EXPECT_FALSE(results[id].verdict.fail) << id;
        for (const auto& c : results[id].claims)
            for (const auto& cand : c.candidates) EXPECT_NE(cand.paper, "p3") << id;
    }
    EXPECT_EQ(results["cutoff"].claims[0].n_papers, 3u);
    EXPECT_EQ(results["cutoff"].claims[0].candidates.size(), 3u);
}

TEST(ClaimsPipeline, FailedExtractionIsRecordedAndTheRunGoesOn) {
    FakeLlmServer server;
    server.set_behaviour([](const json& body, httplib::Response& res, int) {
        if (body["messages"][1]["content"].get<std::string>().find("Broken") == std::string::npos) return false;
        res.set_content(FakeLlmServer::completion("not json at all"), "application/json");
        return true;
    });
    ChatClient client(options_for(server));
    auto extractor = make_llm_extractor(client);
    auto grader = make_offline_grader();
    auto judge = make_rule_judge("rule");
    HashEmbedder embedder;
    ClaimNovPipeline pipeline(*extractor, *grader, *judge, embedder);
    PoolClaimStore store(":memory:");
    pipeline.prepare_pool(make_pool(4), store);
    std::vector<PipelineProposal> proposals(2);
    proposals[0].id = "broken";
    proposals[0].text = {"", "Broken", "x"};
    proposals[1].id = "fine";
    proposals[1].text = {"", "Fine", "We study topic 1 with care"};
    std::map<std::string, ProposalResult> results;
    pipeline.run(proposals, [&](const ProposalResult& r) { results[r.id] = r; });
    EXPECT_NE(results["broken"].error.find("invalid answer after one repair"), std::string::npos) << results["broken"].error;
    EXPECT_TRUE(results["fine"].error.empty());
    EXPECT_TRUE(json::parse(proposal_result_json(results["broken"], "")).contains("error"));
}

TEST(ClaimsPipeline, AKilledRunResumesWithoutRepeatingOrLosingProposals) {
    FakeLlmServer server;
    server.set_delay_ms(2);
    test::TempDir tmp;
    const std::string out = tmp.file("claims.jsonl");
    std::vector<PipelineProposal> proposals(12);
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < proposals.size(); ++i) {
        proposals[i].id = "q" + std::to_string(i);
        proposals[i].text = {"", "Proposal " + std::to_string(i), "We study topic " + std::to_string(i) + " with care"};
        ids.push_back(proposals[i].id);
    }
    PoolClaimStore store(":memory:");
    std::set<std::string> finished_first;
    {
        ChatClient client(options_for(server));  // no response cache: every repeat would reach the server
        auto extractor = make_llm_extractor(client);
        auto grader = make_llm_grader(client);
        auto judge = make_llm_judge(client);
        HashEmbedder embedder;
        PipelineOptions options;
        options.window = 4;
        options.cancel = [&] { client.cancel(); };
        ClaimNovPipeline pipeline(*extractor, *grader, *judge, embedder, options);
        pipeline.prepare_pool(make_pool(6), store);
        ResumableOutput output(out, false);
        int written = 0;
        EXPECT_THROW(pipeline.run(proposals,
                                  [&](const ProposalResult& r) {
                                      if (written == 5) throw std::runtime_error("killed");
                                      output.write(r.id, proposal_result_json(r, ""));
                                      finished_first.insert(r.id);
                                      ++written;
                                  }),
                     std::runtime_error);
    }
    ASSERT_EQ(finished_first.size(), 5u);
    const std::size_t first_requests = server.n_requests();

    ChatClient client(options_for(server));
    auto extractor = make_llm_extractor(client);
    auto grader = make_llm_grader(client);
    auto judge = make_llm_judge(client);
    HashEmbedder embedder;
    ClaimNovPipeline pipeline(*extractor, *grader, *judge, embedder);
    EXPECT_EQ(pipeline.prepare_pool(make_pool(6), store).extracted_now, 0u);
    ResumableOutput output(out, true);
    EXPECT_EQ(output.done(), finished_first);
    std::vector<PipelineProposal> todo;
    for (const auto& p : proposals)
        if (!output.done().count(p.id)) todo.push_back(p);
    pipeline.run(todo, [&](const ProposalResult& r) { output.write(r.id, proposal_result_json(r, "")); });
    EXPECT_EQ(output.finish(ids), 12u);

    // No finished proposal was extracted again.
    const auto bodies = server.bodies();
    for (std::size_t i = first_requests; i < bodies.size(); ++i) {
        const std::string user = bodies[i]["messages"][1]["content"];
        if (bodies[i]["messages"][0]["content"].get<std::string>().find("contribution claims") == std::string::npos) continue;
        for (const auto& id : finished_first) {
            const std::string title = "Title: Proposal " + id.substr(1) + "\n";
            EXPECT_EQ(user.find(title), std::string::npos) << id << " was extracted again";
        }
    }
    // Every proposal once, in input order.
    std::istringstream lines(test::read_file(out));
    std::vector<std::string> seen;
    for (std::string line; std::getline(lines, line);) seen.push_back(json::parse(line)["id"]);
    EXPECT_EQ(seen, ids);
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}
