// POST /v1/claims (docs/api.md): the ClaimNov check of `novelty claims` as a server job. The
// stages are configured once, at server start, with the flags of `novelty claims`; each request
// names proposals (and optionally a cutoff, exclusions, a pool and the judge), and the job's
// result holds one record per proposal in the claims keys of docs/formats.md, the same records
// the CLI writes for the same input.
#pragma once

#include "novelty/encoder/embedder.hpp"
#include "novelty_host/claimnov/claims_setup.hpp"
#include "novelty_host/jobs/job_registry.hpp"
#include "novelty_host/server/server.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace novelty::host {

struct ClaimsServiceOptions {
    std::string corpus_dir;    ///< opened read-only; no cache is ever written into it
    ClaimsLlmSettings llm;     ///< its response_cache, when set, must lie outside the corpus
    /// SQLite file keeping pool claims across jobs and restarts; "" = in memory for the life of
    /// the service. Must lie outside the corpus directory.
    std::string claims_cache;
    std::size_t window = 64;         ///< proposals in flight at once within a job
    ClaimsMethodSettings method;     ///< alpha, weights and the no-judge rule's threshold
    std::size_t max_proposals = 1024;    ///< proposals per request at most
    std::size_t max_text_bytes = 100000; ///< title + text per proposal at most
};

class ClaimsService {
public:
    /// Opens the corpus, the pool claim store and the stages. `embedder` embeds claims; its name
    /// must be the corpus's recorded embedder. Throws CorpusError for a bad corpus, UsageError for
    /// a cache inside the corpus, a mismatched embedder, bad LLM settings or bad method constants.
    ClaimsService(ClaimsServiceOptions options, std::unique_ptr<Embedder> embedder);
    ~ClaimsService();
    ClaimsService(const ClaimsService&) = delete;
    ClaimsService& operator=(const ClaimsService&) = delete;

    /// Reads and checks a request body: {"proposals": [{"id", "title", "text"|"abstract",
    /// "date"?, "exclude"?, "pool"?}], "cutoff"?, "exclude"?, "pool"?, "judge"?: "llm"|"rule"}
    /// (a proposal's own "pool" wins over the request's). Throws
    /// UsageError naming the field for a bad one. Returns the job's work, which produces
    /// {"results": [one record per proposal, in input order], "approximate", "pool"} and reports
    /// progress ("pool claims", then "proposals"). Jobs run one at a time.
    std::function<std::string(const JobProgressFn&)> make_job(const std::string& body);

    /// True when extraction and grading are the offline approximation.
    bool approximate() const;
    /// One line for the server log: the stages in use.
    std::string describe() const;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

/// Adds POST /v1/claims to `server` (before start()); the service lives while the server's
/// handlers and jobs do.
void add_claims_endpoint(Server& server, std::shared_ptr<ClaimsService> service);

}  // namespace novelty::host
