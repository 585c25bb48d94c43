// novelty retrieve and novelty eval retrieval end to end: per-query cutoffs, the TREC run and
// JSON Lines outputs, rewrites from a file or from an LLM (a fake OpenAI-compatible server), the
// table and JSON of the evaluation, and errors that name the file and line.
#include "fake_llm_server.hpp"
#include "novelty/io/npy.hpp"
#include "novelty_host/llm/prompts.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

// Five papers; "future" (2022) is a near-copy of the query text, after every query's cutoff.
const char* papers =
    "{\"id\": \"p-old\", \"title\": \"Sparse attention for long documents\", \"abstract\": \"Sparse attention patterns scale transformers to long inputs.\", \"date\": \"2018\"}\n"
    "{\"id\": \"p-gnn\", \"title\": \"Graph neural networks for molecules\", \"abstract\": \"Message passing predicts molecular properties.\", \"date\": \"2019\"}\n"
    "{\"id\": \"p-rl\", \"title\": \"Reinforcement learning for grasping\", \"abstract\": \"Robots learn to pick objects.\", \"date\": \"2020\"}\n"
    "{\"id\": \"p-late\", \"title\": \"Linear attention transformers\", \"abstract\": \"Kernelised attention for long sequences.\", \"date\": \"2021\"}\n"
    "{\"id\": \"future\", \"title\": \"Sparse attention for very long documents\", \"abstract\": \"Sparse attention for very long documents in transformers.\", \"date\": \"2022\"}\n";

struct CliSetup {
    TempDir tmp;
    std::string corpus;
    std::string queries;
};

void make_setup(CliSetup& s) {
    novelty::test::write_file(s.tmp.file("papers.jsonl"), papers);
    s.corpus = s.tmp.file("c");
    ASSERT_EQ(run_cli("corpus import -q --in " + shell_quote(s.tmp.file("papers.jsonl")) + " --out " + shell_quote(s.corpus)).exit_code, 0);
    // 4-d vectors: "future" is nearest to the q1 vector, then p-old.
    const std::vector<float> v = {0.9f, 0.1f, 0, 0,   // p-old
                                  0, 1, 0, 0,         // p-gnn
                                  0, 0, 1, 0,         // p-rl
                                  0.5f, 0, 0, 0.5f,   // p-late
                                  1, 0, 0, 0.01f};    // future
    novelty::write_npy(s.tmp.file("v.npy"), novelty::DType::f32, 5, 4, v.data());
    ASSERT_EQ(run_cli("corpus add-vectors -q " + shell_quote(s.corpus) + " --vectors " + shell_quote(s.tmp.file("v.npy"))).exit_code, 0);
    s.queries = s.tmp.file("q.jsonl");
    novelty::test::write_file(s.queries,
                              "{\"id\": \"q1\", \"text\": \"sparse attention for very long documents\", \"date\": \"2021\"}\n"
                              "{\"id\": \"q2\", \"text\": \"graph neural networks molecules\", \"date\": \"2019\"}\n"
                              "{\"id\": \"q3\", \"text\": \"attention\", \"date\": \"2010\"}\n");
    const std::vector<float> qv = {1, 0, 0, 0, 0, 1, 0.1f, 0, 1, 0, 0, 0};
    novelty::write_npy(s.tmp.file("qv.npy"), novelty::DType::f32, 3, 4, qv.data());
}

struct RunLine {
    std::string qid, q0, doc;
    int rank;
    double score;
    std::string tag;
};

std::vector<RunLine> read_run(const std::string& path) {
    std::vector<RunLine> lines;
    std::istringstream in(novelty::test::read_file(path));
    RunLine l;
    while (in >> l.qid >> l.q0 >> l.doc >> l.rank >> l.score >> l.tag) lines.push_back(l);
    return lines;
}

}  // namespace

TEST(RetrieveCli, TrecRunRespectsEachQuerysCutoffForEveryMethod) {
    CliSetup s;
    make_setup(s);
    const auto result = run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                                " --vectors " + shell_quote(s.tmp.file("qv.npy")) + " --k 10 --out " +
                                shell_quote(s.tmp.file("run.trec")) + " --jsonl " + shell_quote(s.tmp.file("run.jsonl")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("1 query found nothing"), std::string::npos) << result.err;  // q3: cutoff 2010
    const auto lines = read_run(s.tmp.file("run.trec"));
    ASSERT_FALSE(lines.empty());
    std::map<std::string, std::vector<std::string>> docs;  // "qid tag" -> docs in file order
    for (const auto& l : lines) {
        EXPECT_EQ(l.q0, "Q0");
        EXPECT_NE(l.doc, "future");  // after every cutoff
        EXPECT_NE(l.qid, "q3");
        if (l.qid == "q2") EXPECT_TRUE(l.doc == "p-old" || l.doc == "p-gnn") << l.doc;  // cutoff 2019
        auto& list = docs[l.qid + " " + l.tag];
        list.push_back(l.doc);
        EXPECT_EQ(l.rank, static_cast<int>(list.size()));
    }
    // Dense: the query vector is nearest to p-old among 2018-2021 papers; BM25 and the fusion agree.
    EXPECT_EQ(docs["q1 dense"].front(), "p-old");
    EXPECT_EQ(docs["q1 bm25"].front(), "p-old");
    EXPECT_EQ(docs["q1 hybrid"].front(), "p-old");
    EXPECT_EQ(docs["q1 dense"].size(), 4u);  // every paper up to 2021
    EXPECT_EQ(docs["q2 bm25"], (std::vector<std::string>{"p-gnn"}));

    // JSON Lines: one line per query in input order, with titles, cutoffs and every method.
    std::istringstream in(novelty::test::read_file(s.tmp.file("run.jsonl")));
    std::vector<nlohmann::json> rows;
    for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0]["query"], "q1");
    EXPECT_EQ(rows[0]["cutoff"], "2021");
    EXPECT_EQ(rows[0]["searchable"], 4);
    EXPECT_EQ(rows[0]["results"]["bm25"][0]["title"], "Sparse attention for long documents");
    EXPECT_EQ(rows[2]["results"]["dense"].size(), 0u);

    // Without a date and without --cutoff a query searches the whole corpus: the copy is found.
    novelty::test::write_file(s.tmp.file("nodate.jsonl"), "{\"id\": \"q1\", \"text\": \"sparse attention for very long documents\"}\n");
    ASSERT_EQ(run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.tmp.file("nodate.jsonl")) +
                      " --methods bm25 --out " + shell_quote(s.tmp.file("all.trec"))).exit_code, 0);
    EXPECT_EQ(read_run(s.tmp.file("all.trec")).front().doc, "future");
    // --cutoff is the default for such queries.
    ASSERT_EQ(run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.tmp.file("nodate.jsonl")) +
                      " --methods bm25 --cutoff 2021 --out " + shell_quote(s.tmp.file("cut.trec"))).exit_code, 0);
    for (const auto& l : read_run(s.tmp.file("cut.trec"))) EXPECT_NE(l.doc, "future");
}

TEST(RetrieveCli, RewritesFromAFileAreFused) {
    CliSetup s;
    make_setup(s);
    novelty::test::write_file(s.tmp.file("rw.jsonl"),
                              "{\"id\": \"q2\", \"expand\": [\"reinforcement learning grasping robots\"], \"hyde\": [\"robots learn grasping\"]}\n");
    const std::string base = "retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                             " --methods bm25 --k 10 --out " + shell_quote(s.tmp.file("rw.trec"));
    auto result = run_cli(base + " --expand 2 --hyde 1 --rewrites " + shell_quote(s.tmp.file("rw.jsonl")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::map<std::string, std::vector<std::string>> docs;
    for (const auto& l : read_run(s.tmp.file("rw.trec"))) docs[l.qid + " " + l.tag].push_back(l.doc);
    // q2 (cutoff 2019): by default (the paper's) only the rewrites are ranked, and the rewrite
    // and the abstract match nothing before 2020.
    EXPECT_EQ(docs.count("q2 bm25+expand"), 0u);
    EXPECT_EQ(docs.count("q2 bm25+hyde"), 0u);
    // q1 has no rewrites: each mode ranks the question alone, the same ranking as bm25.
    EXPECT_EQ(docs["q1 bm25+expand"], docs["q1 bm25"]);
    EXPECT_EQ(docs["q1 bm25+hyde"], docs["q1 bm25"]);
    // --fuse-original fuses the question (p-gnn) with the rewrites, in both modes.
    result = run_cli(base + " --expand 2 --hyde 1 --fuse-original --rewrites " + shell_quote(s.tmp.file("rw.jsonl")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    docs.clear();
    for (const auto& l : read_run(s.tmp.file("rw.trec"))) docs[l.qid + " " + l.tag].push_back(l.doc);
    EXPECT_EQ(docs["q2 bm25+expand"], (std::vector<std::string>{"p-gnn"}));
    EXPECT_EQ(docs["q2 bm25+hyde"], (std::vector<std::string>{"p-gnn"}));

    // --llm and --rewrites are alternatives; one of them is needed.
    result = run_cli(base + " --expand 2 --llm http://localhost:1/v1 --llm-model m --rewrites " + shell_quote(s.tmp.file("rw.jsonl")));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("alternatives"), std::string::npos) << result.err;
    result = run_cli(base + " --hyde 3");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--rewrites"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("--llm"), std::string::npos) << result.err;
}

TEST(RetrieveCli, LlmExpansionAndHydeAreFusedAndAFailedQueryFallsBackToItsText) {
    CliSetup s;
    make_setup(s);
    novelty::test::FakeLlmServer server;
    server.set_delay_ms(20);  // so that requests submitted together overlap at the server
    // Expansion of q1 brings in the grasping paper; HyDE of q1 writes a molecules abstract; every
    // request about q2 fails with a 500.
    server.set_behaviour([](const nlohmann::json& body, httplib::Response& res, int) {
        const std::string system = body["messages"][0]["content"], user = body["messages"][1]["content"];
        const bool hyde = system.find("hypothetical abstracts") != std::string::npos;
        if (user.find("graph neural networks molecules") != std::string::npos) {
            res.status = 500;
            res.set_content("server trouble", "text/plain");
            return true;
        }
        const nlohmann::json answer = hyde ? nlohmann::json{{"abstracts", {"Message passing graph networks predict molecular properties."}}}
                                           : nlohmann::json{{"rewrites", {"reinforcement learning robots grasping", "sparse attention"}}};
        res.set_content(novelty::test::FakeLlmServer::completion(answer.dump()), "application/json");
        return true;
    });
    const std::string base = "retrieve --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                             " --methods bm25 --k 10 --expand 2 --hyde 1 --retries 0 --llm-model fake-model --fuse-original";
    auto result = run_cli(base + " --llm " + server.base_url() + " --out " + shell_quote(s.tmp.file("llm.trec")) +
                          " --jsonl " + shell_quote(s.tmp.file("llm.jsonl")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    // One expansion and one HyDE request per query, each carrying the query text.
    const auto bodies = server.bodies();
    ASSERT_EQ(bodies.size(), 6u);
    std::size_t carrying_q1 = 0;
    for (const auto& body : bodies) {
        EXPECT_EQ(body["model"], "fake-model");
        carrying_q1 += body["messages"][1]["content"].get<std::string>().find("sparse attention for very long documents") != std::string::npos;
    }
    EXPECT_EQ(carrying_q1, 2u);
    EXPECT_GE(server.max_in_flight(), 2);  // all queries' requests, both modes, submitted before any is awaited
    EXPECT_NE(result.err.find("query 'q2': LLM expansion failed"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("query 'q2': LLM HyDE failed"), std::string::npos) << result.err;

    std::map<std::string, std::vector<std::string>> docs;
    for (const auto& l : read_run(s.tmp.file("llm.trec"))) docs[l.qid + " " + l.tag].push_back(l.doc);
    // q1 (cutoff 2021): the rewrite finds p-rl, which the question alone does not.
    EXPECT_EQ(std::count(docs["q1 bm25"].begin(), docs["q1 bm25"].end(), "p-rl"), 0);
    EXPECT_EQ(std::count(docs["q1 bm25+expand"].begin(), docs["q1 bm25+expand"].end(), "p-rl"), 1);
    EXPECT_EQ(docs["q1 bm25+expand"].front(), "p-old");  // in the question and the second rewrite
    // The abstract brings p-gnn, fused with the question's own ranking.
    EXPECT_EQ(std::count(docs["q1 bm25+hyde"].begin(), docs["q1 bm25+hyde"].end(), "p-gnn"), 1);
    EXPECT_EQ(std::count(docs["q1 bm25"].begin(), docs["q1 bm25"].end(), "p-gnn"), 0);
    // q2: both modes fell back to the query text alone.
    EXPECT_EQ(docs["q2 bm25+expand"], docs["q2 bm25"]);
    EXPECT_EQ(docs["q2 bm25+hyde"], docs["q2 bm25"]);
    EXPECT_FALSE(docs["q2 bm25"].empty());

    // The JSON Lines record the rewrites used and the failures.
    std::istringstream in(novelty::test::read_file(s.tmp.file("llm.jsonl")));
    std::vector<nlohmann::json> rows;
    for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0]["rewrites"]["expand"], (nlohmann::json{"reinforcement learning robots grasping", "sparse attention"}));
    EXPECT_EQ(rows[0]["rewrites"]["hyde"].size(), 1u);
    EXPECT_FALSE(rows[0].contains("rewrite_errors"));
    EXPECT_EQ(rows[0]["expand_mode"], "multi");
    EXPECT_EQ(rows[0]["fuse_original"], true);
    EXPECT_EQ(rows[1]["rewrites"]["expand"].size(), 0u);
    EXPECT_NE(rows[1]["rewrite_errors"]["expand"].get<std::string>().find("500"), std::string::npos) << rows[1];
    EXPECT_TRUE(rows[1]["rewrite_errors"].contains("hyde"));

    // Fed back with --rewrites, the JSON Lines reproduce the run exactly, with no LLM.
    result = run_cli(base + " -q --rewrites " + shell_quote(s.tmp.file("llm.jsonl")) + " --out " + shell_quote(s.tmp.file("again.trec")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(novelty::test::read_file(s.tmp.file("again.trec")), novelty::test::read_file(s.tmp.file("llm.trec")));
    EXPECT_EQ(server.n_requests(), 6u);

    // A second LLM run answers the successful requests from the response cache (in the corpus).
    result = run_cli(base + " -q --llm " + server.base_url() + " --out " + shell_quote(s.tmp.file("cached.trec")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(server.n_requests(), 8u);  // only q2's two failed requests again
    EXPECT_EQ(novelty::test::read_file(s.tmp.file("cached.trec")), novelty::test::read_file(s.tmp.file("llm.trec")));
    // Without a model the client refuses to start: this server lists no models.
    result = run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                     " --methods bm25 --expand 1 --llm " + server.base_url() + " --out " + shell_quote(s.tmp.file("x.trec")));
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("--llm-model"), std::string::npos) << result.err;
}

TEST(RetrieveCli, SingleQueryExpansionRanksTheQuestionWithItsContinuationAndTheModelIsAsked) {
    CliSetup s;
    make_setup(s);
    novelty::test::FakeLlmServer server;
    server.set_models({"the-only-model"});
    const std::string continuation = "Robots learn grasping with reinforcement learning.";
    server.set_behaviour([&](const nlohmann::json&, httplib::Response& res, int) {
        res.set_content(novelty::test::FakeLlmServer::completion(nlohmann::json{{"continuation", continuation}}.dump()),
                        "application/json");
        return true;
    });
    const std::string base = "retrieve -q --corpus " + shell_quote(s.corpus) + " --methods bm25 --k 10 --retries 0";
    auto result = run_cli(base + " --queries " + shell_quote(s.queries) + " --expand 1 --expand-mode single --llm " +
                          server.base_url() + " --cache none --out " + shell_quote(s.tmp.file("single.trec")) + " --jsonl " +
                          shell_quote(s.tmp.file("single.jsonl")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto bodies = server.bodies();
    ASSERT_EQ(bodies.size(), 3u);  // one continuation per query
    for (const auto& body : bodies) {
        EXPECT_EQ(body["model"], "the-only-model");  // from GET /v1/models
        EXPECT_EQ(body["messages"][0]["content"], std::string(novelty::host::prompt_text("expand_continuation")));
        EXPECT_EQ(body["messages"][1]["content"].get<std::string>().rfind("Research question: ", 0), 0u);
    }
    // The expansion ranks the question with the continuation appended: the same as a query
    // whose text is exactly that, under the same cutoff.
    novelty::test::write_file(s.tmp.file("appended.jsonl"),
                              nlohmann::json{{"id", "q1"}, {"text", "sparse attention for very long documents " + continuation},
                                             {"date", "2021"}}
                                      .dump() +
                                  "\n");
    ASSERT_EQ(run_cli(base + " --queries " + shell_quote(s.tmp.file("appended.jsonl")) + " --out " +
                      shell_quote(s.tmp.file("appended.trec"))).exit_code, 0);
    std::map<std::string, std::vector<std::string>> single, appended;
    for (const auto& l : read_run(s.tmp.file("single.trec"))) single[l.qid + " " + l.tag].push_back(l.doc);
    for (const auto& l : read_run(s.tmp.file("appended.trec"))) appended[l.qid + " " + l.tag].push_back(l.doc);
    EXPECT_EQ(single["q1 bm25+expand"], appended["q1 bm25"]);
    EXPECT_NE(single["q1 bm25+expand"], single["q1 bm25"]);  // the continuation brings in p-rl
    const std::string jsonl = novelty::test::read_file(s.tmp.file("single.jsonl"));
    const auto first = nlohmann::json::parse(jsonl.substr(0, jsonl.find('\n')));
    EXPECT_EQ(first["expand_mode"], "single");
    EXPECT_EQ(first["fuse_original"], false);
    EXPECT_EQ(first["rewrites"]["expand"], nlohmann::json::array({continuation}));
    // Fed back, the continuation reproduces the run.
    result = run_cli(base + " --queries " + shell_quote(s.queries) + " --expand 1 --expand-mode single --rewrites " +
                     shell_quote(s.tmp.file("single.jsonl")) + " --out " + shell_quote(s.tmp.file("again.trec")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(novelty::test::read_file(s.tmp.file("again.trec")), novelty::test::read_file(s.tmp.file("single.trec")));

    // Single mode writes one continuation; a mode must be one of the two.
    result = run_cli(base + " --queries " + shell_quote(s.queries) + " --expand 3 --expand-mode single --llm " +
                     server.base_url() + " --out " + shell_quote(s.tmp.file("x.trec")));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("the number of expansions must be 1 (--expand)"), std::string::npos) << result.err;
    result = run_cli(base + " --queries " + shell_quote(s.queries) + " --expand 1 --expand-mode both --llm " +
                     server.base_url() + " --out " + shell_quote(s.tmp.file("x.trec")));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("multi or single"), std::string::npos) << result.err;
    // Several models and none named: the error lists them.
    server.set_models({"a-model", "b-model"});
    result = run_cli(base + " --queries " + shell_quote(s.queries) + " --expand 1 --llm " + server.base_url() + " --out " +
                     shell_quote(s.tmp.file("x.trec")));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("a-model, b-model"), std::string::npos) << result.err;
}

TEST(RetrieveCli, BadInputNamesTheFileAndLine) {
    CliSetup s;
    make_setup(s);
    novelty::test::write_file(s.tmp.file("bad.jsonl"), "{\"id\": \"a\", \"text\": \"x\"}\n{\"id\": \"b\", \"date\": \"20x1\", \"text\": \"y\"}\n");
    auto result = run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.tmp.file("bad.jsonl")) +
                          " --methods bm25 --out " + shell_quote(s.tmp.file("o.trec")));
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_NE(result.err.find(s.tmp.file("bad.jsonl") + ":2:"), std::string::npos) << result.err;
    novelty::test::write_file(s.tmp.file("rw.jsonl"), "{\"id\": \"q1\"}\n{\"id\": \"q2\", \"expand\": \"one\"}\n");
    result = run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                     " --methods bm25 --expand 1 --rewrites " + shell_quote(s.tmp.file("rw.jsonl")) + " --out " +
                     shell_quote(s.tmp.file("o.trec")));
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_NE(result.err.find(s.tmp.file("rw.jsonl") + ":2:"), std::string::npos) << result.err;
    // A retrieve output line given as rewrites must hold the rewrites of a run with --expand/--hyde.
    novelty::test::write_file(s.tmp.file("out.jsonl"), "{\"query\": \"q1\", \"results\": {}}\n");
    result = run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                     " --methods bm25 --expand 1 --rewrites " + shell_quote(s.tmp.file("out.jsonl")) + " --out " +
                     shell_quote(s.tmp.file("o.trec")));
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_NE(result.err.find(s.tmp.file("out.jsonl") + ":1: a retrieve output line without a \"rewrites\""), std::string::npos)
        << result.err;
    result = run_cli("retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                     " --methods dense,sparse --out " + shell_quote(s.tmp.file("o.trec")));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("unknown method 'sparse'"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(s.tmp.file("o.trec")));  // nothing half-written
}

TEST(EvalRetrievalCli, TableAndJsonWithHandComputedValues) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("run"),
                              "q1 Q0 a 1 0.9 dense\nq1 Q0 b 2 0.8 dense\nq1 Q0 c 3 0.7 dense\n"
                              "q2 Q0 x 1 0.9 dense\n"
                              "q1 Q0 b 1 0.9 bm25\n");
    novelty::test::write_file(tmp.file("qrels"), "q1 0 b 1\nq1 0 c 2\nq2 0 y 1\n");
    auto result = run_cli("eval retrieval --run " + shell_quote(tmp.file("run")) + " --qrels " + shell_quote(tmp.file("qrels")) +
                          " --k 1,3 --method dense --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto doc = nlohmann::json::parse(result.out);
    // q1: recall@1 0, recall@3 1; q2: 0. nDCG@3 (graded) of q1: (1/log2(3) + 2/2) / (2 + 1/log2(3)).
    EXPECT_DOUBLE_EQ(doc["mean"]["recall@1"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(doc["mean"]["recall@3"].get<double>(), 0.5);
    const double ndcg3 = (1 / std::log2(3.0) + 1.0) / (2 + 1 / std::log2(3.0));
    EXPECT_NEAR(doc["per_query"]["q1"]["ndcg@3"].get<double>(), ndcg3, 1e-12);
    EXPECT_NEAR(doc["mean"]["ndcg@3"].get<double>(), ndcg3 / 2, 1e-12);
    EXPECT_DOUBLE_EQ(doc["mean"]["coverage"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(doc["per_query"]["q2"]["recall@3"].get<double>(), 0.0);

    // Both methods: a table with one row each; JSON keyed by method.
    result = run_cli("eval retrieval --run " + shell_quote(tmp.file("run")) + " --qrels " + shell_quote(tmp.file("qrels")) + " --k 1,3");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("dense"), std::string::npos);
    EXPECT_NE(result.out.find("bm25"), std::string::npos);
    EXPECT_NE(result.out.find("R@3"), std::string::npos);
    EXPECT_NE(result.err.find("1 query of the qrels had no results"), std::string::npos) << result.err;  // q2 for bm25
    result = run_cli("eval retrieval --run " + shell_quote(tmp.file("run")) + " --qrels " + shell_quote(tmp.file("qrels")) +
                     " --json --gain binary --out " + shell_quote(tmp.file("e.json")));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto both = nlohmann::json::parse(novelty::test::read_file(tmp.file("e.json")));
    EXPECT_DOUBLE_EQ(both["methods"]["bm25"]["mean"]["recall@5"].get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(both["methods"]["bm25"]["mean"]["ndcg@5"].get<double>(), 0.5 * (1.0 / (1 + 1 / std::log2(3.0))));

    novelty::test::write_file(tmp.file("badrun"), "q1 Q0 a 1 0.9 dense\nq1 Q0 b 2 dense\n");
    result = run_cli("eval retrieval --run " + shell_quote(tmp.file("badrun")) + " --qrels " + shell_quote(tmp.file("qrels")));
    EXPECT_EQ(result.exit_code, 3);
    EXPECT_NE(result.err.find(tmp.file("badrun") + ":2:"), std::string::npos) << result.err;
    result = run_cli("eval retrieval --run " + shell_quote(tmp.file("run")) + " --qrels " + shell_quote(tmp.file("qrels")) + " --k 5,x");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--k: 'x' is not a positive integer"), std::string::npos) << result.err;
    result = run_cli("eval retrieval --run " + shell_quote(tmp.file("run")) + " --qrels " + shell_quote(tmp.file("qrels")) + " --k 5,20,5");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--k lists 5 twice"), std::string::npos) << result.err;
    result = run_cli("eval retrieval --run " + shell_quote(tmp.file("run")) + " --qrels " + shell_quote(tmp.file("qrels")) + " --method sparse");
    EXPECT_EQ(result.exit_code, 2);
}

TEST(RetrieveCli, ResumeKeepsFinishedQueriesOfTheJsonLines) {
    CliSetup s;
    make_setup(s);
    const std::string base = "retrieve -q --corpus " + shell_quote(s.corpus) + " --queries " + shell_quote(s.queries) +
                             " --vectors " + shell_quote(s.tmp.file("qv.npy")) + " --k 3 --out ";
    ASSERT_EQ(run_cli(base + shell_quote(s.tmp.file("full.jsonl"))).exit_code, 0);
    std::vector<std::string> lines;
    {
        std::istringstream in(novelty::test::read_file(s.tmp.file("full.jsonl")));
        for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 3u);
    // An interrupted run finished q2 (marked, to show it is kept) and was cut inside q1's line.
    const std::string kept = lines[1].substr(0, lines[1].size() - 1) + ",\"kept\":true}";
    const std::string out = s.tmp.file("out.jsonl");
    novelty::test::write_file(out + ".partial", kept + "\n" + lines[0].substr(0, 30));
    auto result = run_cli(base + shell_quote(out));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("--resume"), std::string::npos) << result.err;
    result = run_cli(base + shell_quote(out) + " --resume");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("(1 from an earlier run)"), std::string::npos) << result.err;
    EXPECT_EQ(novelty::test::read_file(out), lines[0] + "\n" + kept + "\n" + lines[2] + "\n");
    // A TREC run is written whole: --resume with one is refused before anything is written.
    result = run_cli(base + shell_quote(s.tmp.file("run.trec")) + " --resume");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("a TREC run (--out"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(s.tmp.file("run.trec")));
}
