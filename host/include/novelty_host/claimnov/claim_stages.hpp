// The three ClaimNov stages (claim extraction, graded entailment, verdict), each behind an
// interface with an LLM implementation (through ChatClient, strict JSON with one repair retry) and
// an offline approximation that needs no network (docs/claimnov.md).
#pragma once

#include "novelty/claimnov/claimnov.hpp"
#include "novelty_host/llm/chat_client.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host {

/// The label every offline stage carries in outputs.
inline constexpr const char* offline_label = "offline-approx";

/// A text with its title: a proposal or a pool paper.
struct TitledText {
    std::string id;  ///< paper id; "" for a proposal
    std::string title;
    std::string text;
};

/// Extraction outcome: 1..4 claims, or an error describing why there are none.
struct Extraction {
    std::vector<Claim> claims;
    std::string error;  ///< "" when ok
};

/// One graded pair.
struct Grade {
    int level = 0;       ///< 1..5; 0 when the grading failed
    std::string reason;
    std::string error;   ///< "" when ok
};

/// One candidate as the verdict judge sees it.
struct ProfileCandidate {
    TitledText paper;
    std::string claim;
    std::string attribute;  ///< the prior claim's attribute
    std::string value;      ///< the prior claim's value
    float sim = 0;
    int level = 0;  ///< 0 = not graded
};

/// One proposal claim as the verdict judge sees it.
struct ProfileClaim {
    Claim claim;
    double anticipation = 0;
    std::vector<ProfileCandidate> candidates;  ///< by e descending, then similarity
};

/// The evidence profile Φ(P).
struct Profile {
    TitledText proposal;
    double novelty = 1;
    std::vector<ProfileClaim> claims;
};

struct Verdict {
    bool fail = false;
    std::optional<std::string> source;
    std::vector<std::size_t> established;
    std::string rationale;
    std::string judge;   ///< "llm:<model>", "rule" or "offline-approx"
    std::string error;   ///< set when an LLM judge failed and the rule decided instead
};

class ClaimExtractor {
public:
    virtual ~ClaimExtractor() = default;
    /// Stable name for caches and outputs: "offline-approx" or "llm:<model>".
    virtual std::string name() const = 0;
    virtual bool approximate() const = 0;
    /// Calls `done` exactly once, possibly before returning; `stage` labels LLM accounting.
    virtual void extract(const TitledText& text, const std::string& stage, std::function<void(Extraction)> done) = 0;
};

class EntailmentGrader {
public:
    virtual ~EntailmentGrader() = default;
    virtual std::string name() const = 0;
    virtual bool approximate() const = 0;
    /// Grades how far `prior_claim` of `prior` covers `claim` of `proposal`; `sim` is their cosine
    /// similarity. Calls `done` exactly once, possibly before returning.
    virtual void grade(const TitledText& proposal, const Claim& claim, const TitledText& prior,
                       const std::string& prior_claim, float sim, std::function<void(Grade)> done) = 0;
};

class VerdictJudge {
public:
    virtual ~VerdictJudge() = default;
    virtual std::string name() const = 0;
    /// Calls `done` exactly once, possibly before returning. `rule` is the no-judge verdict, the
    /// fallback when an LLM judge fails.
    virtual void judge(const Profile& profile, const Verdict& rule, std::function<void(Verdict)> done) = 0;
};

// --- strict answer parsing (the problem is returned; std::nullopt = valid) -------------------------

/// {"claims": [{"text", "dimension", "attribute", "value"}, ...]} with 1..4 claims, known
/// dimensions and non-empty texts; extra keys are ignored. Returns the problem, or fills `out`.
std::optional<std::string> parse_extraction_answer(const std::string& content, std::vector<Claim>& out);
/// {"level": 1..5 (an integer, or a string holding one), "reason": STR (optional)}.
std::optional<std::string> parse_entailment_answer(const std::string& content, Grade& out);
/// {"decision": "pass"|"fail", "source": STR|null, "established": [INT...], "rationale": STR};
/// claim indices must be < n_claims.
std::optional<std::string> parse_verdict_answer(const std::string& content, std::size_t n_claims, Verdict& out);
/// A failing verdict's source must be one of the profile's candidate papers (which are corpus
/// papers); returns the problem otherwise. A verdict without a source passes.
std::optional<std::string> verdict_source_problem(const Verdict& verdict, const Profile& profile);

/// Sends `request`; when the answer fails `validate` (which returns the problem), sends it once
/// more with the answer and a repair instruction; calls `done` with the valid content, or with
/// the error ("invalid answer after one repair: ..." or the transport error). Only answers that
/// pass `validate` are stored in the response cache, and a cached answer that fails it is asked
/// again.
void ask_json(ChatClient& client, ChatRequest request,
              std::function<std::optional<std::string>(const std::string&)> validate,
              std::function<void(std::optional<std::string> content, std::string error)> done);

// --- implementations ------------------------------------------------------------------------------

/// LLM stages; `client` must outlive them.
std::unique_ptr<ClaimExtractor> make_llm_extractor(ChatClient& client);
std::unique_ptr<EntailmentGrader> make_llm_grader(ChatClient& client);
/// What the LLM judge is shown of the profile. The defaults are the paper's: the whole profile
/// (every graded candidate of every claim, whole abstracts, attribute and value fields). The cuts
/// are for models with a small context window.
struct VerdictPromptOptions {
    std::size_t max_candidates = 0;      ///< candidates shown per claim, strongest first; 0 = all
    std::size_t max_abstract_chars = 0;  ///< abstract bytes shown per candidate (cut at a UTF-8 boundary, "..." added); 0 = whole
};
std::unique_ptr<VerdictJudge> make_llm_judge(ChatClient& client, VerdictPromptOptions view = {});

/// Offline claim typing: splits the text into sentences, keeps up to four that state
/// contributions (first-person or "this paper" statements, else the leading sentences), and types
/// each by keywords (dataset/benchmark -> resource, accuracy/outperform/% -> result,
/// task/problem/setting -> problem, else methodology). An approximation.
std::unique_ptr<ClaimExtractor> make_offline_extractor();

/// Similarity thresholds of the offline grader: level 5 at sim >= t[3], 4 at >= t[2], 3 at >= t[1],
/// 2 at >= t[0], else 1.
struct OfflineGradeThresholds {
    float t[4] = {0.45f, 0.6f, 0.75f, 0.88f};
};
/// Offline grading from cosine similarity alone. An approximation.
std::unique_ptr<EntailmentGrader> make_offline_grader(OfflineGradeThresholds thresholds = {});
/// The level the offline grader gives for `sim`.
int offline_level(float sim, const OfflineGradeThresholds& thresholds = {});

/// The no-judge rule as a judge: returns the rule verdict it is given, labelled `label` ("rule",
/// or "offline-approx" when the grades it rests on are approximate).
std::unique_ptr<VerdictJudge> make_rule_judge(std::string label);

/// The user message of each LLM stage (exposed for tests).
std::string extraction_prompt(const TitledText& text);
std::string entailment_prompt(const TitledText& proposal, const Claim& claim, const TitledText& prior,
                              const std::string& prior_claim);
std::string verdict_prompt(const Profile& profile, const VerdictPromptOptions& view = {});

}  // namespace novelty::host
