// The triage cascade (docs/dedup.md), shared by `novelty triage` and POST /v1/triage: the
// ideas are deduplicated, each cluster's representative is scored with RND (which also finds its
// nearest paper), and ClaimNov runs only on the representatives the selection picks (those whose
// gate value, the nearest paper's similarity or RND, is in an uncertain band; or the top RND
// ones; within a budget). Every input idea gets one record, whatever fails: members inherit their
// representative's result, marked as such; a failure is recorded on the ideas it touched, which
// then fall back to the gate's decision.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/dedup.hpp"
#include "novelty/encoder/embedder.hpp"
#include "novelty/search/search.hpp"
#include "novelty_host/claimnov/claims_setup.hpp"
#include "novelty_host/jobs/job_registry.hpp"
#include "novelty_host/claimnov/pool_claim_store.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace novelty::host {

/// Which representatives ClaimNov checks.
enum class TriageSelect {
    band,  ///< those whose gate value is in [band_lo, band_hi], the closest to the band's middle first
    top,   ///< the highest RND first (ties: earlier idea)
    all,   ///< every representative (the reference the cascade is measured against)
};

/// The cheap signal that decides without ClaimNov, and whose uncertain band is checked.
enum class TriageGate {
    rnd,      ///< RND in [0, 100]: pass at or above the band's middle
    nearest,  ///< the nearest paper's cosine similarity: fail (that paper the source) at or above the middle
};

/// "band", "top", "all"; UsageError otherwise.
TriageSelect parse_triage_select(const std::string& text);
/// "rnd", "nearest"; UsageError otherwise.
TriageGate parse_triage_gate(const std::string& text);
/// Parses "LO,HI" with LO <= HI inside the gate's scale (RND 0..100, similarity -1..1);
/// UsageError naming `flag` otherwise.
std::pair<double, double> parse_band(const std::string& text, TriageGate gate, const std::string& flag = "--band");
/// The default band of a gate: RND 20,60; nearest similarity 0.65,0.95 (docs/dedup.md).
std::pair<double, double> default_band(TriageGate gate);

struct TriageSettings {
    double threshold = 0.8;  ///< dedup: cosine at or above which ideas are linked
    Representative representative = Representative::central;
    std::size_t p = 100, q = 50;  ///< RND
    TriageGate gate = TriageGate::nearest;
    double band_lo = 0.65, band_hi = 0.95;  ///< the gate's uncertain band (default_band(gate))
    TriageSelect select = TriageSelect::band;
    /// Representatives ClaimNov checks at most (in the selection's order); nullopt = no limit.
    std::optional<std::size_t> budget;
    double rule_threshold = 0.5;  ///< the no-judge rule's N(P) threshold (as novelty claims)
    std::size_t window = 64;      ///< proposals in flight in the ClaimNov pipeline
};

/// One idea as given. `vector` rows are in `TriageInput::vectors`.
struct TriageIdea {
    ClaimsProposalInput proposal;  ///< id, title, text, date, exclude
    std::size_t line = 0;          ///< 1-based line (or request index + 1)
};

struct TriageInput {
    std::vector<TriageIdea> ideas;
    std::vector<float> vectors;   ///< n x dim; rows of ideas without text are ignored
    std::size_t dim = 0;
    std::optional<PartialDate> cutoff;
    std::string cutoff_text;
    std::vector<std::string> exclude;
};

/// What the cascade needs from its caller; all must outlive run_triage.
struct TriageContext {
    const Corpus* corpus = nullptr;
    SearchBackend* backend = nullptr;
    ClaimStageSet* stages = nullptr;
    Embedder* embedder = nullptr;      ///< embeds claims (the corpus's encoder)
    PoolClaimStore* store = nullptr;
    bool write_cache = true;           ///< may the scorer cache self-joins in the corpus
    JobProgressFn progress;            ///< stages "dedup", "rnd", "pool claims", "claimnov"
};

struct TriageSummary {
    std::size_t ideas = 0, clusters = 0, empty = 0;
    std::size_t representatives = 0;  ///< scored (non-empty) representatives
    std::size_t checked = 0;          ///< representatives ClaimNov judged in this run
    std::size_t resumed = 0;          ///< ideas whose record came from an earlier run
    std::size_t errors = 0;           ///< ideas whose record holds an "error"
    std::size_t dedup_rounds = 0;
};

/// Runs the cascade. `done` holds the ids whose records an earlier run wrote: a cluster all of
/// whose ids are done is skipped, any other is redone whole (records are written cluster by
/// cluster, so an interruption can cut at most one cluster short). `on_record(id, json)`
/// receives each idea's record (one JSON object, docs/formats.md "triage") as soon as it is
/// final, on the calling thread. Throws only for errors that concern the whole run (bad
/// settings, a corpus too small for p and q overall); per-idea failures are recorded.
TriageSummary run_triage(const TriageContext& context, const TriageSettings& settings, const TriageInput& input,
                         const std::set<std::string>& done,
                         const std::function<void(const std::string& id, const std::string& json)>& on_record);

}  // namespace novelty::host
