// Recall@k, nDCG@k and candidate-pool coverage, as trec_eval defines them.
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace novelty {

namespace {

int grade_of(const std::map<std::string, int>& judged, const std::string& doc) {
    const auto it = judged.find(doc);
    return it == judged.end() ? 0 : it->second;
}

std::size_t relevant_count(const std::map<std::string, int>& judged) {
    std::size_t n = 0;
    for (const auto& [doc, grade] : judged) n += grade > 0;
    return n;
}

double gain_of(int grade, Gain gain) {
    if (grade <= 0) return 0;
    return gain == Gain::binary ? 1.0 : static_cast<double>(grade);
}

}  // namespace

std::vector<std::string> trec_order(std::span<const RunEntry> entries) {
    std::vector<const RunEntry*> order;
    order.reserve(entries.size());
    for (const auto& e : entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const RunEntry* a, const RunEntry* b) {
        return a->score != b->score ? a->score > b->score : a->doc > b->doc;
    });
    std::vector<std::string> docs;
    docs.reserve(order.size());
    for (const RunEntry* e : order) docs.push_back(e->doc);
    return docs;
}

double recall_at(std::span<const std::string> ranked, const std::map<std::string, int>& judged, std::size_t k) {
    if (k < 1) throw UsageError("recall@k needs k >= 1");
    const std::size_t n_relevant = relevant_count(judged);
    if (n_relevant == 0) return 0;
    std::size_t hits = 0;
    for (std::size_t i = 0; i < std::min(k, ranked.size()); ++i) hits += grade_of(judged, ranked[i]) > 0;
    return static_cast<double>(hits) / static_cast<double>(n_relevant);
}

double ndcg_at(std::span<const std::string> ranked, const std::map<std::string, int>& judged, std::size_t k, Gain gain) {
    if (k < 1) throw UsageError("nDCG@k needs k >= 1");
    double dcg = 0;
    for (std::size_t i = 0; i < std::min(k, ranked.size()); ++i)
        dcg += gain_of(grade_of(judged, ranked[i]), gain) / std::log2(static_cast<double>(i) + 2.0);
    std::vector<double> ideal;
    for (const auto& [doc, grade] : judged)
        if (grade > 0) ideal.push_back(gain_of(grade, gain));
    std::sort(ideal.begin(), ideal.end(), std::greater<>());
    double ideal_dcg = 0;
    for (std::size_t i = 0; i < std::min(k, ideal.size()); ++i)
        ideal_dcg += ideal[i] / std::log2(static_cast<double>(i) + 2.0);
    return ideal_dcg > 0 ? dcg / ideal_dcg : 0.0;
}

MethodEvaluation evaluate_run(const std::string& method, const std::map<std::string, std::vector<RunEntry>>& results,
                              const Qrels& qrels, std::span<const std::size_t> ks, Gain gain) {
    if (ks.empty()) throw UsageError("give at least one cutoff k");
    for (std::size_t k : ks)
        if (k < 1) throw UsageError("every cutoff k must be at least 1");
    if (qrels.empty()) throw UsageError("the qrels hold no query");
    MethodEvaluation eval;
    eval.method = method;
    eval.ks.assign(ks.begin(), ks.end());
    eval.mean_recall.assign(ks.size(), 0.0);
    eval.mean_ndcg.assign(ks.size(), 0.0);
    std::size_t n_pooled = 0, n_relevant = 0;
    for (const auto& [qid, judged] : qrels) {
        QueryScores scores;
        scores.n_relevant = relevant_count(judged);
        std::vector<std::string> ranked;
        if (const auto it = results.find(qid); it != results.end()) {
            scores.in_run = true;
            ranked = trec_order(it->second);
        }
        scores.n_returned = ranked.size();
        for (std::size_t k : ks) {
            scores.recall.push_back(recall_at(ranked, judged, k));
            scores.ndcg.push_back(ndcg_at(ranked, judged, k, gain));
        }
        for (const auto& doc : ranked) scores.n_pooled += grade_of(judged, doc) > 0;
        scores.coverage = scores.n_relevant == 0 ? 0.0 : static_cast<double>(scores.n_pooled) / static_cast<double>(scores.n_relevant);
        n_pooled += scores.n_pooled;
        n_relevant += scores.n_relevant;
        eval.n_missing += !scores.in_run;
        eval.n_no_relevant += scores.n_relevant == 0;
        for (std::size_t i = 0; i < ks.size(); ++i) {
            eval.mean_recall[i] += scores.recall[i];
            eval.mean_ndcg[i] += scores.ndcg[i];
        }
        eval.mean_coverage += scores.coverage;
        eval.per_query.emplace(qid, std::move(scores));
    }
    const auto n = static_cast<double>(qrels.size());
    for (std::size_t i = 0; i < ks.size(); ++i) {
        eval.mean_recall[i] /= n;
        eval.mean_ndcg[i] /= n;
    }
    eval.mean_coverage /= n;
    eval.pair_coverage = n_relevant == 0 ? 0.0 : static_cast<double>(n_pooled) / static_cast<double>(n_relevant);
    for (const auto& [qid, entries] : results)
        if (!qrels.count(qid)) eval.unjudged.push_back(qid);
    return eval;
}

}  // namespace novelty
