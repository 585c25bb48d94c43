// The ClaimNov pipeline (docs/claimnov.md): pool claims extracted once and cached; for each
// proposal its claims are extracted, embedded with the proposal title, matched per dimension
// against the pool (k_d claims, one per paper), graded, aggregated into N(P), and judged.
// Proposals move through the stages in a window: while the LLM grades some, the next ones are
// extracted, embedded and retrieved.
#pragma once

#include "novelty/claimnov/claim_index.hpp"
#include "novelty/claimnov/claimnov.hpp"
#include "novelty/encoder/embedder.hpp"
#include "novelty_host/claimnov/claim_stages.hpp"
#include "novelty_host/claimnov/pool_claim_store.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host {

/// A pool paper (a corpus row) as the pipeline needs it.
struct PoolPaper {
    std::size_t row = 0;  ///< corpus row (date order: a cutoff is a row prefix)
    std::string id;
    std::string title;
    std::string abstract;
};

/// One proposal to judge.
struct PipelineProposal {
    std::string id;
    TitledText text;
    /// Only pool papers at rows < row_limit are visible (its cutoff); SIZE_MAX = all.
    std::size_t row_limit = SIZE_MAX;
    std::vector<std::int64_t> excluded_rows;  ///< pool papers treated as absent
    /// Its own pool (corpus rows, sorted ascending, unique): only these papers of the run's pool
    /// are visible to it (cutoff and exclusions still apply); null = the whole run pool. Shared,
    /// since many proposals may share one pool.
    std::shared_ptr<const std::vector<std::size_t>> pool_rows;
};

struct CandidateResult {
    std::string paper;       ///< pool paper id
    std::size_t paper_row = 0;
    std::string title;
    std::string claim;       ///< the pool claim's text
    std::string attribute;   ///< the pool claim's attribute ("" when the extractor gave none)
    std::string value;       ///< the pool claim's value
    float sim = 0;           ///< cosine similarity of the two embedded claims
    int level = 0;           ///< 1..5; 0 when the grading failed
    std::string reason;
    std::string error;       ///< the grading failure, "" when graded
};

struct ClaimResult {
    Claim claim;
    double importance = 1.0;
    ClaimSignals signals;           ///< a(c), max e, strong count over the graded candidates
    std::size_t k = 0;              ///< k_d for this claim's pool
    std::size_t n_papers = 0;       ///< n_d: pool papers with claims in its dimension
    std::vector<CandidateResult> candidates;  ///< by similarity descending
};

struct ProposalResult {
    std::size_t index = 0;   ///< position in the input
    std::string id;
    std::string error;       ///< set when the proposal could not be judged (e.g. extraction failed)
    std::vector<ClaimResult> claims;
    ProposalNovelty novelty;
    Verdict verdict;
    /// The top profile paper: the candidate with the highest e (ties: higher similarity, then
    /// first met); "" without graded candidates.
    std::string attribution;
    std::size_t failed_grades = 0;
};

struct PipelineOptions {
    ClaimNovParams params;
    /// Proposals in flight at once (between extraction and verdict).
    std::size_t window = 64;
    /// Texts per embedding call for pool claims.
    std::size_t embed_batch = 256;
    /// Called when a run aborts (an exception from on_result, say) to cancel LLM calls in flight.
    std::function<void()> cancel;
};

/// Pool preparation counts.
struct PoolStats {
    std::size_t papers = 0;           ///< pool papers
    std::size_t extracted_now = 0;    ///< papers extracted in this run (the rest came from the store)
    std::size_t failed = 0;           ///< papers whose extraction failed (no claims; retried next run)
    std::size_t claims = 0;           ///< pool claims indexed
    std::size_t embedded_now = 0;     ///< claim texts embedded in this run
    std::vector<std::string> failures;  ///< the first few failures, "PAPER_ID: error"
};

class ClaimNovPipeline {
public:
    /// The stages and the embedder must outlive the pipeline.
    ClaimNovPipeline(ClaimExtractor& extractor, EntailmentGrader& grader, VerdictJudge& judge, Embedder& embedder,
                     PipelineOptions options = {});
    ~ClaimNovPipeline();

    /// Extracts the claims of pool papers not yet in `store` (all at once, as concurrent as the
    /// extractor allows), embeds claim texts not yet in `store`, and indexes them. Call once
    /// before run(). `progress(done, total)` counts extracted papers.
    PoolStats prepare_pool(std::vector<PoolPaper> papers, PoolClaimStore& store,
                           const std::function<void(std::size_t, std::size_t)>& progress = {});

    /// Judges each proposal; `on_result` receives each result on the calling thread as soon as it
    /// is complete (completion order, not input order). An exception from `on_result` cancels the
    /// calls in flight, waits for them, and propagates.
    void run(const std::vector<PipelineProposal>& proposals, const std::function<void(const ProposalResult&)>& on_result);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// A result as one JSON Lines record (the "claims" keys of docs/formats.md). `context` is a JSON
/// object text merged in at the top level (stages, approximation flag, provenance).
std::string proposal_result_json(const ProposalResult& result, const std::string& context_json);

}  // namespace novelty::host
