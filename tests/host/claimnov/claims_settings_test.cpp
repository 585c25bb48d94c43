// ClaimNov as its paper configures it (issue 18): the LLM judge is the default whenever an LLM is
// given, the judge sees the whole profile unless cut, alpha and the dimension weights are
// settings, a model is found through /models when none is named, and malformed answers from a
// model (prose around the JSON, truncated JSON, out-of-range levels, missing fields) are
// repaired once or recorded as errors, and counted.
#include "fake_llm_server.hpp"
#include "hash_embedder.hpp"

#include "novelty/util/error.hpp"
#include "novelty_host/claimnov/claimnov_pipeline.hpp"
#include "novelty_host/claimnov/claims_setup.hpp"
#include "novelty_host/llm/model_discovery.hpp"

#include <gtest/gtest.h>

#include <future>
#include <map>

using namespace novelty;
using namespace novelty::host;
using novelty::test::FakeLlmServer;
using novelty::test::HashEmbedder;
using json = nlohmann::json;

namespace {

ClaimsLlmSettings settings_for(const FakeLlmServer& server) {
    ClaimsLlmSettings s;
    s.llm = server.base_url();
    s.llm_model = "fake";
    s.retries = 0;
    return s;
}

std::vector<PoolPaper> make_pool(std::size_t n) {
    std::vector<PoolPaper> pool;
    for (std::size_t i = 0; i < n; ++i)
        pool.push_back({i, "p" + std::to_string(i), "Paper " + std::to_string(i),
                        "We study topic " + std::to_string(i) + " with care. We propose method alpha" + std::to_string(i) +
                            " for it"});
    return pool;
}

/// A profile of one claim with `n` candidates whose abstracts are `abstract_chars` long.
Profile big_profile(std::size_t n, std::size_t abstract_chars) {
    Profile p;
    p.proposal = {"", "T", "D"};
    ProfileClaim c;
    c.claim = {"claim text", ClaimDimension::result, "accuracy on X", "from 30% to 77%"};
    for (std::size_t i = 0; i < n; ++i) {
        ProfileCandidate cand;
        cand.paper = {"p" + std::to_string(i), "Title " + std::to_string(i), std::string(abstract_chars, 'a')};
        cand.claim = "prior " + std::to_string(i);
        cand.attribute = "attr" + std::to_string(i);
        cand.value = "val" + std::to_string(i);
        cand.level = 5 - static_cast<int>(i % 5);
        c.candidates.push_back(cand);
    }
    p.claims.push_back(c);
    return p;
}

json profile_json(const std::string& prompt) { return json::parse(prompt.substr(prompt.find('{'))); }

}  // namespace

TEST(ClaimsSettings, TheJudgeIsTheLlmWheneverAnLlmIsGivenAndTheRuleOnRequest) {
    FakeLlmServer server;
    ClaimsLlmSettings s = settings_for(server);
    EXPECT_EQ(s.judge, "auto");
    EXPECT_EQ(ClaimStageSet(s).judge().name(), "llm:fake");
    s.judge = "rule";
    EXPECT_EQ(ClaimStageSet(s).judge().name(), "rule");
    s.judge = "llm";
    EXPECT_EQ(ClaimStageSet(s).judge().name(), "llm:fake");
    // Offline, "auto" is the rule (labelled as the approximation); "llm" has no server to ask.
    ClaimsLlmSettings offline;
    EXPECT_EQ(ClaimStageSet(offline).judge().name(), offline_label);
    offline.judge = "llm";
    EXPECT_THROW(ClaimStageSet{offline}, UsageError);
    // A judge URL with offline stages: "auto" would not apply, the URL is the judge.
    offline.judge = server.base_url();
    offline.judge_model = "judge-model";
    EXPECT_EQ(ClaimStageSet(offline).judge().name(), "llm:judge-model");
}

TEST(ClaimsSettings, TheJudgeSeesTheWholeProfileByDefaultAndACutOnRequest) {
    const Profile profile = big_profile(12, 3000);
    const json whole = profile_json(verdict_prompt(profile));
    const json& claim = whole["claims"][0];
    ASSERT_EQ(claim["candidates"].size(), 12u);
    EXPECT_FALSE(claim.contains("candidates_not_shown"));
    EXPECT_EQ(claim["attribute"], "accuracy on X");
    EXPECT_EQ(claim["value"], "from 30% to 77%");
    for (std::size_t i = 0; i < 12; ++i) {
        EXPECT_EQ(claim["candidates"][i]["abstract"].get<std::string>().size(), 3000u);
        EXPECT_EQ(claim["candidates"][i]["attribute"], "attr" + std::to_string(i));
        EXPECT_EQ(claim["candidates"][i]["value"], "val" + std::to_string(i));
    }
    VerdictPromptOptions cut;
    cut.max_candidates = 5;
    cut.max_abstract_chars = 1200;
    const json small = profile_json(verdict_prompt(profile, cut));
    ASSERT_EQ(small["claims"][0]["candidates"].size(), 5u);
    EXPECT_EQ(small["claims"][0]["candidates_not_shown"], 7);
    EXPECT_EQ(small["claims"][0]["candidates"][4]["paper"], "p4");  // the first five, in profile order
    EXPECT_EQ(small["claims"][0]["candidates"][0]["abstract"].get<std::string>(), std::string(1200, 'a') + "...");
}

TEST(ClaimsSettings, TheLlmJudgeOfAPipelineReceivesEveryGradedCandidate) {
    FakeLlmServer server;
    ClaimStageSet stages(settings_for(server));
    HashEmbedder embedder;
    ClaimNovPipeline pipeline(stages.extractor(), stages.grader(), stages.judge(), embedder);
    PoolClaimStore store(":memory:");
    pipeline.prepare_pool(make_pool(30), store);
    std::vector<PipelineProposal> proposals(1);
    proposals[0].id = "copy";
    proposals[0].text = {"", "Paper 3", "We study topic 3 with care"};
    std::vector<ProposalResult> results;
    pipeline.run(proposals, [&](const ProposalResult& r) { results.push_back(r); });
    ASSERT_EQ(results.size(), 1u);
    ASSERT_TRUE(results[0].error.empty()) << results[0].error;
    EXPECT_EQ(results[0].verdict.judge, "llm:fake");
    // n_d = 30 papers: k_d = 10 candidates, all of them shown to the judge with whole abstracts.
    const std::size_t k = results[0].claims[0].candidates.size();
    EXPECT_EQ(k, 10u);
    std::size_t verdicts = 0;
    for (const auto& body : server.bodies()) {
        const std::string system = body["messages"][0]["content"];
        if (system.find("novel enough") == std::string::npos) continue;
        ++verdicts;
        const json profile = profile_json(body["messages"][1]["content"]);
        ASSERT_EQ(profile["claims"][0]["candidates"].size(), k);
        for (const auto& cand : profile["claims"][0]["candidates"]) {
            EXPECT_EQ(cand["attribute"], "a");  // the fake extractor's attribute of every pool claim
            EXPECT_EQ(cand["abstract"].get<std::string>().find("We study topic"), 0u);
            EXPECT_EQ(cand["abstract"].get<std::string>().find("..."), std::string::npos);
        }
    }
    EXPECT_EQ(verdicts, 1u);
}

TEST(ClaimsSettings, AlphaAndWeightsAreCheckedAndReachTheScore) {
    ClaimsMethodSettings m;
    ClaimNovParams p = claimnov_params(m);
    EXPECT_EQ(p.alpha, 0.5);
    EXPECT_EQ(p.weights[0], 0.4);
    EXPECT_EQ(p.weights[3], 0.3);
    m.alpha = 0.25;
    m.weights = "result=0.6, problem=0";
    m.threshold = 0.3;
    p = claimnov_params(m);
    EXPECT_EQ(p.alpha, 0.25);
    EXPECT_EQ(p.weights[static_cast<int>(ClaimDimension::problem)], 0.0);
    EXPECT_EQ(p.weights[static_cast<int>(ClaimDimension::methodology)], 0.2);  // not named: the paper's
    EXPECT_EQ(p.weights[static_cast<int>(ClaimDimension::result)], 0.6);
    EXPECT_EQ(p.rule_novelty_threshold, 0.3);
    const std::pair<std::string, std::string> bad_weights[] = {
        {"problem", "DIMENSION=WEIGHT"},        {"idea=1", "unknown dimension 'idea'"},
        {"problem=x", "not a finite number"},   {"problem=-1", "negative"},
        {"problem=1,problem=2", "twice"},       {"problem=0,methodology=0,resource=0,result=0", "every weight is 0"},
        {"result=inf", "not a finite number"},
    };
    for (const auto& [text, message] : bad_weights) {
        ClaimsMethodSettings w;
        w.weights = text;
        try {
            claimnov_params(w);
            ADD_FAILURE() << text;
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << text << " -> " << e.what();
        }
    }
    for (double alpha : {0.0, -0.5, 1.5}) {
        ClaimsMethodSettings a;
        a.alpha = alpha;
        EXPECT_THROW(claimnov_params(a), UsageError) << alpha;
    }

    // Through the pipeline: a(c) uses alpha, N(P) the weights.
    FakeLlmServer server;
    ClaimStageSet stages(settings_for(server));
    HashEmbedder embedder;
    std::map<double, ProposalResult> by_alpha;
    for (double alpha : {0.5, 0.9}) {
        PipelineOptions options;
        options.params.alpha = alpha;
        ClaimNovPipeline pipeline(stages.extractor(), stages.grader(), stages.judge(), embedder, options);
        PoolClaimStore store(":memory:");
        pipeline.prepare_pool(make_pool(12), store);
        std::vector<PipelineProposal> proposals(1);
        proposals[0].id = "copy";
        proposals[0].text = {"", "Paper 3", "We study topic 3 with care"};
        pipeline.run(proposals, [&](const ProposalResult& r) { by_alpha[alpha] = r; });
    }
    for (const auto& [alpha, r] : by_alpha) {
        ASSERT_TRUE(r.error.empty()) << r.error;
        std::vector<double> e;
        for (const auto& cand : r.claims[0].candidates) e.push_back(entailment_score(cand.level));
        EXPECT_DOUBLE_EQ(r.claims[0].signals.anticipation, claim_anticipation(e, alpha)) << alpha;
    }
    EXPECT_GT(by_alpha[0.5].claims[0].signals.anticipation, by_alpha[0.9].claims[0].signals.anticipation);
}

TEST(ClaimsSettings, AProposalsOwnPoolLimitsItsCandidates) {
    FakeLlmServer server;
    ClaimStageSet stages(settings_for(server));
    HashEmbedder embedder;
    ClaimNovPipeline pipeline(stages.extractor(), stages.grader(), stages.judge(), embedder);
    PoolClaimStore store(":memory:");
    pipeline.prepare_pool(make_pool(12), store);
    std::vector<PipelineProposal> proposals(2);
    for (auto& p : proposals) p.text = {"", "Paper 3", "We study topic 3 with care"};
    proposals[0].id = "own";
    proposals[0].pool_rows = std::make_shared<const std::vector<std::size_t>>(std::vector<std::size_t>{1, 5, 7});
    proposals[1].id = "all";
    std::map<std::string, ProposalResult> results;
    pipeline.run(proposals, [&](const ProposalResult& r) { results[r.id] = r; });
    ASSERT_EQ(results["own"].claims[0].n_papers, 3u);
    for (const auto& cand : results["own"].claims[0].candidates)
        EXPECT_TRUE(cand.paper == "p1" || cand.paper == "p5" || cand.paper == "p7") << cand.paper;
    EXPECT_EQ(results["own"].claims[0].candidates.size(), 3u);
    EXPECT_FALSE(results["own"].verdict.fail);  // its source p3 is not in its pool
    EXPECT_EQ(results["all"].claims[0].n_papers, 12u);
    EXPECT_TRUE(results["all"].verdict.fail);
    EXPECT_EQ(results["all"].verdict.source.value_or(""), "p3");
}

TEST(ModelDiscovery, TheServersOnlyModelIsUsedAndSeveralOrNoneAreNamed) {
    FakeLlmServer server;
    ChatClientOptions o;
    o.base_url = server.base_url();
    // The server has no /models: the error says so and asks for a model name.
    try {
        with_server_model(o);
        ADD_FAILURE();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("--llm-model"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("404"), std::string::npos) << e.what();
    }
    server.set_models({"only-model"});
    EXPECT_EQ(with_server_model(o).model, "only-model");
    o.model = "named";
    EXPECT_EQ(with_server_model(o).model, "named");  // a named model is never replaced
    o.model.clear();
    server.set_models({"m1", "m2"});
    try {
        with_server_model(o);
        ADD_FAILURE();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("lists 2: m1, m2"), std::string::npos) << e.what();
    }
    server.set_models({});
    EXPECT_THROW(with_server_model(o), UsageError);
    EXPECT_EQ(list_models(server.base_url() + "/", "", 10).size(), 0u);

    // The claims stages ask for it when no model is named.
    server.set_models({"served"});
    ClaimsLlmSettings s = settings_for(server);
    s.llm_model.clear();
    ClaimStageSet stages(s);
    EXPECT_EQ(stages.extractor().name(), "llm:served");
    EXPECT_EQ(stages.judge().name(), "llm:served");
}

namespace {

/// A model that answers badly once per kind of prompt, as small models do.
void misbehave(FakeLlmServer& server) {
    server.set_behaviour([](const json& body, httplib::Response& res, int) {
        const std::string system = body["messages"][0]["content"], user = body["messages"][1]["content"];
        const bool repair = body["messages"].size() > 2;
        auto say = [&](const std::string& content) {
            res.set_content(FakeLlmServer::completion(content), "application/json");
            return true;
        };
        if (system.find("contribution claims") != std::string::npos) {
            // Prose around the JSON, fixed by the repair.
            if (user.find("Title: Prose") != std::string::npos && !repair)
                return say("Here are the claims:\n{\"claims\": [{\"text\": \"x\", \"dimension\": \"problem\"}]}\nHope it helps.");
            // Missing fields twice: the proposal gets an error record.
            if (user.find("Title: Fieldless") != std::string::npos)
                return say("{\"claims\": [{\"dimension\": \"problem\", \"attribute\": \"a\"}]}");
            return false;
        }
        if (system.find("already establishes") != std::string::npos) {
            if (user.find("PRIOR PAPER p1\n") != std::string::npos) return say("{\"level\": 4, \"rea");  // truncated, twice
            if (user.find("PRIOR PAPER p2\n") != std::string::npos)  // out of range, then fine
                return say(repair ? "{\"level\": 3}" : "{\"level\": 7}");
            return false;
        }
        if (system.find("novel enough") != std::string::npos && user.find("\"Truncated judge\"") != std::string::npos)
            return say("{\"source\": \"p3\", \"rationale\": \"no decision given\"}");  // missing field, twice
        return false;
    });
}

}  // namespace

TEST(MalformedAnswers, AreRepairedOnceOrRecordedAndEveryOneIsCounted) {
    FakeLlmServer server;
    misbehave(server);
    ClaimStageSet stages(settings_for(server));
    HashEmbedder embedder;
    ClaimNovPipeline pipeline(stages.extractor(), stages.grader(), stages.judge(), embedder);
    PoolClaimStore store(":memory:");
    pipeline.prepare_pool(make_pool(4), store);
    std::vector<PipelineProposal> proposals(3);
    proposals[0].id = "prose";
    proposals[0].text = {"", "Prose", "We study topic 3 with care"};
    proposals[1].id = "fieldless";
    proposals[1].text = {"", "Fieldless", "We study topic 2"};
    proposals[2].id = "judge";
    proposals[2].text = {"", "Truncated judge", "We study topic 3 with care"};
    std::map<std::string, ProposalResult> results;
    pipeline.run(proposals, [&](const ProposalResult& r) { results[r.id] = r; });
    ASSERT_EQ(results.size(), 3u);  // every proposal accounted for

    // Prose around the JSON: repaired, the proposal judged; its candidates p1 (truncated twice)
    // failed to grade and p2 (level 7, then 3) was repaired.
    const ProposalResult& prose = results["prose"];
    ASSERT_TRUE(prose.error.empty()) << prose.error;
    std::map<std::string, const CandidateResult*> by_paper;
    for (const auto& cand : prose.claims[0].candidates) by_paper[cand.paper] = &cand;
    ASSERT_EQ(by_paper.size(), 4u);
    EXPECT_EQ(by_paper["p1"]->level, 0);
    EXPECT_NE(by_paper["p1"]->error.find("invalid answer after one repair"), std::string::npos) << by_paper["p1"]->error;
    EXPECT_EQ(by_paper["p2"]->level, 3);
    EXPECT_TRUE(by_paper["p2"]->error.empty());
    EXPECT_EQ(prose.failed_grades, 1u);
    const json record = json::parse(proposal_result_json(prose, ""));
    EXPECT_EQ(record["failed_grades"], 1);

    // Missing fields in every extraction answer: an error record, nothing judged.
    EXPECT_NE(results["fieldless"].error.find("claim extraction failed"), std::string::npos) << results["fieldless"].error;
    EXPECT_NE(results["fieldless"].error.find("no \"text\""), std::string::npos) << results["fieldless"].error;
    EXPECT_TRUE(json::parse(proposal_result_json(results["fieldless"], "")).contains("error"));

    // A verdict without a decision, twice: the rule decides and says why.
    const Verdict& v = results["judge"].verdict;
    EXPECT_EQ(v.judge, "rule");
    EXPECT_NE(v.error.find("the LLM judge failed"), std::string::npos) << v.error;
    EXPECT_NE(v.error.find("\"decision\""), std::string::npos) << v.error;

    // The client counted every invalid answer under its stage, with how it ended.
    const auto usage = stages.clients().front()->usage();
    EXPECT_EQ(usage.at("extract").invalid_answers, 2u);  // prose (repaired), fieldless (not)
    EXPECT_EQ(usage.at("extract").repaired, 1u);
    EXPECT_EQ(usage.at("extract").unrepaired, 1u);
    // p1 and p2 are graded for each of the two judged proposals' claims.
    const std::uint64_t entail_invalid = usage.at("entail").invalid_answers;
    EXPECT_EQ(entail_invalid, usage.at("entail").repaired + usage.at("entail").unrepaired);
    EXPECT_EQ(usage.at("entail").repaired, usage.at("entail").unrepaired);  // one p2 per p1
    EXPECT_GE(usage.at("entail").unrepaired, 2u);
    EXPECT_EQ(usage.at("verdict").invalid_answers, 1u);
    EXPECT_EQ(usage.at("verdict").unrepaired, 1u);
    EXPECT_EQ(usage.at("total").invalid_answers, 3u + entail_invalid);
    const std::string report = usage_report(*stages.clients().front());
    EXPECT_NE(report.find("extract: "), std::string::npos) << report;
    EXPECT_NE(report.find("2 invalid answers (1 repaired, 1 not)"), std::string::npos) << report;
}

TEST(ClaimsSettings, MaxTokensBoundsEveryAnswerThatSetsNone) {
    FakeLlmServer server;
    ClaimsLlmSettings s = settings_for(server);
    s.max_tokens = 64;
    ClaimStageSet stages(s);
    std::promise<Extraction> done;
    stages.extractor().extract({"", "T", "We study topic 1."}, "extract", [&](Extraction e) { done.set_value(e); });
    EXPECT_TRUE(done.get_future().get().error.empty());
    ASSERT_EQ(server.n_requests(), 1u);
    EXPECT_EQ(server.bodies()[0]["max_tokens"], 64);
    // Not set: not sent (the server's default).
    FakeLlmServer other;
    ClaimStageSet plain(settings_for(other));
    std::promise<Extraction> again;
    plain.extractor().extract({"", "T", "We study topic 1."}, "extract", [&](Extraction e) { again.set_value(e); });
    again.get_future().get();
    EXPECT_FALSE(other.bodies()[0].contains("max_tokens"));
}
