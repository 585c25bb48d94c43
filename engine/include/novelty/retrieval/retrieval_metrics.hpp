// Evaluating retrieval runs against relevance labels, with trec_eval's definitions: the TREC run
// and qrels files, Recall@k, nDCG@k (binary or graded gain) and the coverage of each method's
// candidate pool. docs/retrieval.md states every rule.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace novelty {

/// Relevance labels: query id -> document id -> grade. A grade > 0 is relevant; 0 or less is
/// judged not relevant. Documents not listed are not relevant.
using Qrels = std::map<std::string, std::map<std::string, int>>;

/// One line of a run, as read.
struct RunEntry {
    std::string doc;
    double score = 0;
};

/// A run file: method (the tag column) -> query id -> its entries in file order.
using RunFile = std::map<std::string, std::map<std::string, std::vector<RunEntry>>>;

/// Reads a qrels file: whitespace-separated `qid iter docid rel` per line (iter is ignored; rel an
/// integer). Blank lines and lines starting with '#' are skipped. Throws InputError naming the
/// file and line for a wrong column count, a non-integer grade, or a (qid, docid) pair given twice.
Qrels read_qrels(const std::string& path);

/// Reads a TREC run: `qid Q0 docid rank score tag` per line (Q0 and rank are read but not used:
/// order comes from the scores, as in trec_eval). Blank lines and '#' lines are skipped. Throws
/// InputError naming the file and line for a wrong column count, a score that is not a finite
/// number, a document listed twice for the same query and tag, or an empty file.
RunFile read_run(const std::string& path);

/// Document ids in trec_eval order: score descending, ties broken by document id descending
/// (byte order), whatever order or rank the file gave.
std::vector<std::string> trec_order(std::span<const RunEntry> entries);

/// How nDCG weighs a relevant document: binary (gain 1 for grade > 0) or graded (gain = grade for
/// grade > 0). Grades <= 0 always gain 0.
enum class Gain { binary, graded };

/// Relevant documents (grade > 0) among the first k of `ranked`, over all relevant documents of
/// the query (trec_eval recall_k). 0 when the query has no relevant documents. k >= 1.
double recall_at(std::span<const std::string> ranked, const std::map<std::string, int>& judged, std::size_t k);

/// nDCG@k (trec_eval ndcg_cut_k): DCG = sum over ranks i = 1..k of gain_i / log2(i + 1), divided
/// by the DCG of the ideal order (judged gains sorted descending, cut at k). 0 when the query
/// has no relevant documents. k >= 1.
double ndcg_at(std::span<const std::string> ranked, const std::map<std::string, int>& judged, std::size_t k, Gain gain);

/// Metrics of one query for one method.
struct QueryScores {
    std::vector<double> recall;  ///< one per cutoff k, in the order given
    std::vector<double> ndcg;    ///< one per cutoff k
    double coverage = 0;         ///< n_pooled / n_relevant (0 without relevant documents)
    std::size_t n_relevant = 0;  ///< documents with grade > 0 in the qrels
    std::size_t n_pooled = 0;    ///< relevant documents anywhere in the returned list (the candidate pool)
    std::size_t n_returned = 0;  ///< documents the run returned (the candidate pool)
    bool in_run = false;         ///< false: the run has no line for this query (every metric 0)
};

/// The evaluation of one method.
struct MethodEvaluation {
    std::string method;
    std::vector<std::size_t> ks;
    /// Every query of the qrels, by id (trec_eval -c: a judged query missing from the run
    /// scores 0). Queries with no relevant document score 0 (trec_eval) and are counted.
    std::map<std::string, QueryScores> per_query;
    std::vector<double> mean_recall;  ///< over per_query, one per k
    std::vector<double> mean_ndcg;
    double mean_coverage = 0;         ///< mean of the per-query coverage
    /// Coverage over all (query, relevant document) pairs: sum of n_pooled / sum of n_relevant
    /// (0 when no query has a relevant document).
    double pair_coverage = 0;
    std::size_t n_missing = 0;        ///< judged queries the run did not return
    std::size_t n_no_relevant = 0;    ///< judged queries without a relevant document
    std::vector<std::string> unjudged;  ///< queries in the run but not in the qrels (left out)
};

/// Evaluates one method's results (query id -> entries) against the qrels at each k (each >= 1).
/// Throws UsageError when ks is empty, a k is 0, or the qrels hold no query.
MethodEvaluation evaluate_run(const std::string& method, const std::map<std::string, std::vector<RunEntry>>& results,
                              const Qrels& qrels, std::span<const std::size_t> ks, Gain gain);

}  // namespace novelty
