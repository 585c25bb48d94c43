// novelty eval retrieval: Recall@k, nDCG@k and candidate-pool coverage of a TREC run against
// qrels, per method (the run's tag column), as a table or JSON.
#include "cli_common.hpp"
#include "query_input.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval_metrics.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <sstream>

namespace novelty::cli {

namespace {


using nlohmann::ordered_json;

struct EvalRetrievalArgs {
    std::string run;
    std::string qrels;
    std::string ks = "5,20,100";
    std::string gain = "graded";
    std::string method;
    bool json = false;
    bool per_query = false;
    std::string out;
};

/// --k's cutoffs: positive counts, none listed twice.
std::vector<std::size_t> parse_ks(const std::string& list) {
    const std::vector<std::size_t> ks = parse_counts(list, "--k", 0);
    for (std::size_t i = 0; i < ks.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (ks[j] == ks[i]) throw UsageError("--k lists " + std::to_string(ks[i]) + " twice");
    return ks;
}

ordered_json method_json(const MethodEvaluation& e, const std::string& gain) {
    ordered_json out;
    out["method"] = e.method;
    out["gain"] = gain;
    out["n_queries"] = e.per_query.size();
    ordered_json mean = ordered_json::object();
    for (std::size_t i = 0; i < e.ks.size(); ++i) {
        mean["recall@" + std::to_string(e.ks[i])] = e.mean_recall[i];
        mean["ndcg@" + std::to_string(e.ks[i])] = e.mean_ndcg[i];
    }
    mean["coverage"] = e.mean_coverage;
    mean["coverage_pairs"] = e.pair_coverage;
    out["mean"] = mean;
    ordered_json per_query = ordered_json::object();
    for (const auto& [qid, s] : e.per_query) {
        ordered_json q;
        for (std::size_t i = 0; i < e.ks.size(); ++i) {
            q["recall@" + std::to_string(e.ks[i])] = s.recall[i];
            q["ndcg@" + std::to_string(e.ks[i])] = s.ndcg[i];
        }
        q["coverage"] = s.coverage;
        q["relevant"] = s.n_relevant;
        q["returned"] = s.n_returned;
        q["pooled"] = s.n_pooled;
        q["in_run"] = s.in_run;
        per_query[qid] = q;
    }
    out["per_query"] = per_query;
    out["missing_from_run"] = e.n_missing;
    out["without_relevant"] = e.n_no_relevant;
    out["unjudged"] = e.unjudged;
    return out;
}

void print_table(const std::vector<MethodEvaluation>& evals, bool per_query) {
    const auto& ks = evals.front().ks;
    std::printf("%-16s %7s", "method", "queries");
    for (std::size_t k : ks) std::printf(" %9s", ("R@" + std::to_string(k)).c_str());
    for (std::size_t k : ks) std::printf(" %9s", ("nDCG@" + std::to_string(k)).c_str());
    std::printf(" %9s %9s\n", "coverage", "pairs");
    for (const auto& e : evals) {
        std::printf("%-16s %7zu", e.method.c_str(), e.per_query.size());
        for (double v : e.mean_recall) std::printf(" %9.4f", v);
        for (double v : e.mean_ndcg) std::printf(" %9.4f", v);
        std::printf(" %9.4f %9.4f\n", e.mean_coverage, e.pair_coverage);
        if (!per_query) continue;
        for (const auto& [qid, s] : e.per_query) {
            std::printf("  %-14s %7s", qid.c_str(), s.in_run ? "" : "(none)");
            for (double v : s.recall) std::printf(" %9.4f", v);
            for (double v : s.ndcg) std::printf(" %9.4f", v);
            std::printf(" %9.4f %4zu/%-4zu\n", s.coverage, s.n_pooled, s.n_relevant);
        }
    }
    std::printf("coverage: share of each query's relevant papers anywhere in the method's returned list (mean over "
                "queries; 'pairs': over all query-paper pairs)\n");
}

int run_eval_retrieval(const EvalRetrievalArgs& args) {
    refuse_output_over_inputs("--out", args.out, {args.run, args.qrels});
    const std::vector<std::size_t> ks = parse_ks(args.ks);
    Gain gain;
    if (args.gain == "graded") gain = Gain::graded;
    else if (args.gain == "binary") gain = Gain::binary;
    else throw UsageError("--gain must be graded or binary, not '" + args.gain + "'");
    const Qrels qrels = read_qrels(args.qrels);
    const RunFile run = read_run(args.run);
    std::vector<MethodEvaluation> evals;
    for (const auto& [tag, results] : run) {
        if (!args.method.empty() && tag != args.method) continue;
        evals.push_back(evaluate_run(tag, results, qrels, ks, gain));
    }
    if (evals.empty()) {
        std::string tags;
        for (const auto& [tag, results] : run) tags += (tags.empty() ? "" : ", ") + tag;
        throw UsageError("--method " + args.method + ": the run has no such tag (it has " + tags + ")");
    }
    ordered_json doc;
    if (evals.size() == 1) {
        doc = method_json(evals[0], args.gain);
    } else {
        doc["methods"] = ordered_json::object();
        for (const auto& e : evals) doc["methods"][e.method] = method_json(e, args.gain);
    }
    if (args.json) std::printf("%s\n", doc.dump(2).c_str());
    else print_table(evals, args.per_query);
    if (!args.out.empty()) {
        AtomicFile file(args.out);
        const std::string text = doc.dump(2) + "\n";
        file.write(text.data(), text.size());
        file.commit();
    }
    const MethodEvaluation& first = evals.front();
    if (first.n_missing > 0)
        std::fprintf(stderr, "novelty: note: %s of the qrels had no results in the run and score 0\n",
                     count_of(first.n_missing, "query").c_str());
    if (first.n_no_relevant > 0)
        std::fprintf(stderr, "novelty: note: %s of the qrels had no relevant paper and score 0 (as in trec_eval)\n",
                     count_of(first.n_no_relevant, "query").c_str());
    if (!first.unjudged.empty())
        std::fprintf(stderr, "novelty: note: %s of the run had no judgements and were left out\n",
                     count_of(first.unjudged.size(), "query").c_str());
    return exit_ok;
}

}  // namespace

void add_eval_retrieval_command(CLI::App& eval, int& exit_code) {
    auto args = std::make_shared<EvalRetrievalArgs>();
    CLI::App* cmd = eval.add_subcommand(
        "retrieval", "Recall@k, nDCG@k and candidate-pool coverage of a TREC run against relevance labels (qrels), "
                     "per method (the run's tag), with trec_eval's definitions");
    cmd->add_option("--run", args->run, "TREC run: qid Q0 docid rank score tag (as 'novelty retrieve' writes)")
        ->required();
    cmd->add_option("--qrels", args->qrels, "Relevance labels: qid 0 docid rel (rel > 0 is relevant)")->required();
    cmd->add_option("--k", args->ks, "Comma-separated cutoffs (default 5,20,100)");
    cmd->add_option("--gain", args->gain, "nDCG gain: graded (gain = rel) or binary (gain 1 when rel > 0); default graded");
    cmd->add_option("--method", args->method, "Evaluate only this tag of the run");
    cmd->add_flag("--json", args->json, "Print JSON instead of a table");
    cmd->add_flag("--per-query", args->per_query, "Also print each query's row in the table");
    cmd->add_option("--out", args->out, "Also write the JSON to this file (atomically)");
    cmd->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_eval_retrieval(*args); }); });
}

}  // namespace novelty::cli
