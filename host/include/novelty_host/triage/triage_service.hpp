// POST /v1/triage (docs/api.md): the cascade of `novelty triage` as a server job. The ClaimNov
// stages are configured once, at server start, with the claims flags of `novelty serve`; each
// request names ideas and optionally the dedup threshold, the band, the selection and budget,
// and the job's result holds one record per idea in the triage keys of docs/formats.md, the
// same records the CLI writes for the same input.
#pragma once

#include "novelty/encoder/embedder.hpp"
#include "novelty/search/backends.hpp"
#include "novelty_host/claimnov/claims_service.hpp"
#include "novelty_host/jobs/job_registry.hpp"
#include "novelty_host/server/server.hpp"

#include <functional>
#include <memory>
#include <string>

namespace novelty::host {

struct TriageServiceOptions {
    ClaimsServiceOptions claims;   ///< corpus, LLM settings, pool claim store, window, rule threshold, limits
    /// The search backend for dedup and RND (on the CPU unless chosen otherwise).
    BackendChoice backend{"cpu"};
    std::size_t threads = 0;
};

class TriageService {
public:
    /// Opens the corpus read-only, the pool claim store, the stages and a search backend.
    /// `embedder` embeds idea texts and claims; it must be the corpus's encoder.
    TriageService(TriageServiceOptions options, std::unique_ptr<Embedder> embedder);
    ~TriageService();
    TriageService(const TriageService&) = delete;
    TriageService& operator=(const TriageService&) = delete;

    /// Reads and checks a request body: {"ideas": [{"id", "title", "text"|"abstract", "date"?,
    /// "exclude"?, "vector"?}], "threshold"?, "representative"?: "central"|"first", "gate"?:
    /// "nearest"|"rnd", "band"?: [LO, HI], "select"?: "band"|"top"|"all", "budget"?, "p"?, "q"?,
    /// "cutoff"?, "exclude"?}. Throws
    /// UsageError naming the field. The job produces {"results": [one record per idea, in input
    /// order], "summary": {...}} and reports progress ("embed", "dedup", "rnd", "pool claims",
    /// "claimnov"). Jobs run one at a time.
    std::function<std::string(const JobProgressFn&)> make_job(const std::string& body);

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

/// Adds POST /v1/triage to `server` (before start()).
void add_triage_endpoint(Server& server, std::shared_ptr<TriageService> service);

}  // namespace novelty::host
