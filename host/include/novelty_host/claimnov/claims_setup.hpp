// What `novelty claims` and POST /v1/claims share: the stages made from the LLM settings, the
// proposals resolved against the corpus (cutoffs, exclusions, the pool), and the context every
// result record carries (stages, approximation flag, provenance). One code path, so that both
// write the same records for the same input.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/dates.hpp"
#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/claimnov/claim_stages.hpp"
#include "novelty_host/claimnov/claimnov_pipeline.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host {

/// How the stages are made (the flags of `novelty claims`, docs/claimnov.md).
struct ClaimsLlmSettings {
    std::string llm = "offline";  ///< "offline", a base URL, or "env" ($NOVELTY_LLM_BASE_URL)
    std::string llm_model;        ///< "" = $NOVELTY_LLM_MODEL
    std::string llm_key;          ///< "" = $NOVELTY_LLM_API_KEY, else $OPENAI_API_KEY
    /// "auto" (the paper's setting: the LLM judge whenever an LLM is given, --llm URL or a judge
    /// URL, else the rule), "rule", "llm" (the --llm server) or another base URL.
    std::string judge = "auto";
    std::string judge_model;      ///< model of a judge URL; "" = llm_model, else the server's only model
    /// What the LLM judge sees; the defaults (whole profile) are the paper's.
    VerdictPromptOptions judge_view;
    std::size_t concurrency = 8;  ///< LLM requests in flight at most, per client
    bool concurrency_given = false;  ///< false: $NOVELTY_LLM_CONCURRENCY may override it
    double timeout_seconds = 120;
    int retries = 5;
    int max_tokens = 0;           ///< per LLM answer; 0 = the server's default
    std::string response_cache;   ///< SQLite file of LLM answers; "" = no cache
};

/// A chat client for the LLM at `url` ("" = $NOVELTY_LLM_BASE_URL) with `model` ("" = the
/// environment's, else the server's only model), with the settings' key, concurrency, timeout,
/// retries, answer length and response cache. Shared by ClaimNov and the retrieval rewriters.
std::unique_ptr<ChatClient> make_chat_client(const ClaimsLlmSettings& s, const std::string& url, const std::string& model);

/// The method's constants as flags give them (`--alpha`, `--weights`, `--threshold`).
struct ClaimsMethodSettings {
    double alpha = 0.5;       ///< rank discount of a(c), in (0, 1]
    /// "" = the paper's weights; else comma-separated DIMENSION=WEIGHT pairs (problem,
    /// methodology, resource, result), dimensions not named keeping the paper's weight.
    std::string weights;
    double threshold = 0.5;   ///< the no-judge rule's N(P) threshold, in [0, 1]
};

/// The ClaimNov constants of `method` (the rest are the paper's). Throws UsageError naming the
/// flag for alpha outside (0, 1], a malformed, unknown, repeated, negative or non-finite weight,
/// weights that are all 0, or a threshold outside [0, 1].
ClaimNovParams claimnov_params(const ClaimsMethodSettings& method);

/// The extractor, grader and judges made from settings; owns the LLM clients they use.
class ClaimStageSet {
public:
    /// Throws UsageError for judge "llm" without an LLM URL, or for bad client options. A client
    /// without a model name (none given, $NOVELTY_LLM_MODEL unset) asks its server's /models and
    /// uses the only model there (UsageError listing them when there are none or several).
    explicit ClaimStageSet(const ClaimsLlmSettings& settings);
    ~ClaimStageSet();
    ClaimStageSet(const ClaimStageSet&) = delete;
    ClaimStageSet& operator=(const ClaimStageSet&) = delete;

    ClaimExtractor& extractor();
    EntailmentGrader& grader();
    /// The judge the settings chose.
    VerdictJudge& judge();
    /// The no-judge rule, labelled "offline-approx" when the grades are approximate, else "rule".
    VerdictJudge& rule_judge();
    /// An LLM judge: the judge URL's, else the --llm server's; nullptr when offline.
    VerdictJudge* llm_judge();
    /// True when extraction or grading is the offline approximation.
    bool approximate() const;
    /// Cancels every LLM call in flight and every later one (for a run that is aborting).
    void cancel();
    /// The LLM clients in use (none offline), for usage reports.
    std::vector<const ChatClient*> clients() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// One proposal as given (a JSON Lines record or a request body entry).
struct ClaimsProposalInput {
    std::string id;
    std::string title;
    std::string text;
    std::optional<PartialDate> date;    ///< its own cutoff; wins over the global one
    std::vector<std::string> exclude;   ///< paper ids left out of its pool
    /// Its own pool ("pool" of the record), resolved to corpus rows by the caller; nullopt = the
    /// run's pool (--pool, else the whole corpus up to its cutoff).
    std::optional<std::vector<std::size_t>> pool_rows;
};

/// Proposals resolved against a corpus.
struct PreparedClaims {
    std::vector<PipelineProposal> proposals;  ///< in input order
    /// Per proposal: a JSON object text {"cutoff": DATE|null, "excluded": [IDS]} (the global
    /// exclusions, its own, and its own id when it is a corpus paper; ids not in the corpus are
    /// listed too), plus "pool_papers": N for a proposal with its own pool.
    std::vector<std::string> provenance;
    /// The run's pool, by row ascending: the union of every proposal's pool, where a proposal
    /// without its own pool contributes `pool_rows` when given, else every row below its limit.
    std::vector<PoolPaper> pool;
};

/// Resolves `inputs`: row limit from its own date, else `cutoff`, else the whole corpus; the
/// excluded rows as above; the visible pool from its own pool_rows, else `pool_rows`, else none
/// (the cutoff alone). `cutoff_text` is the global cutoff as given ("" when none).
/// `filters` (none, or one per proposal, null = none): metadata filters; a filtered proposal's
/// pool is its pool (own, --pool, or every paper up to its cutoff) less the papers the filter
/// does not allow, so those papers are absent for it, as excluded ones are.
PreparedClaims prepare_claims(const Corpus& corpus, const std::vector<ClaimsProposalInput>& inputs,
                              const std::optional<PartialDate>& cutoff, const std::string& cutoff_text,
                              const std::vector<std::string>& global_exclude,
                              const std::optional<std::vector<std::size_t>>& pool_rows,
                              const std::vector<std::shared_ptr<const RowFilter>>& filters = {});

/// What every result of a run shares.
struct ClaimsRunInfo {
    bool approximate = false;
    std::string extractor, grader, judge;  ///< stage names
    std::string corpus_identity;
    std::string embedder;
    std::size_t pool_papers = 0;
    ClaimNovParams params;              ///< alpha and weights are recorded
    VerdictPromptOptions judge_view;    ///< recorded when the judge is an LLM
    bool llm_judge = false;
};

/// The context object (JSON text) merged into a result by proposal_result_json():
/// {"approximate", "stages": {"extractor", "grader", "judge"[, "judge_view": {"max_candidates",
/// "max_abstract_chars"}]}, "provenance": {"corpus", "embedder", "pool_papers", "alpha",
/// "weights": {"problem", "methodology", "resource", "result"}, "cutoff", "excluded"}};
/// `provenance` is one of PreparedClaims::provenance (its keys win).
std::string claims_context_json(const ClaimsRunInfo& info, const std::string& provenance);

}  // namespace novelty::host
