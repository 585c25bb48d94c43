// ClaimNov aggregation: typed claims, retrieval depth k_d, graded entailment e, the rank-discounted
// anticipation a(c), the weighted proposal novelty N(P), max and breadth signals, and the
// no-judge verdict rule (docs/claimnov.md). Pure functions: no I/O, no network.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

/// The four claim dimensions, in the order used for arrays indexed by dimension.
enum class ClaimDimension { problem = 0, methodology = 1, resource = 2, result = 3 };
inline constexpr std::size_t n_claim_dimensions = 4;

/// "problem", "methodology", "resource", "result".
const char* dimension_name(ClaimDimension dimension);
/// The dimension a name (case-insensitive, surrounding spaces ignored) denotes, if any.
std::optional<ClaimDimension> parse_dimension(const std::string& name);

/// One typed contribution claim.
struct Claim {
    std::string text;
    ClaimDimension dimension = ClaimDimension::methodology;
    std::string attribute;
    std::string value;
};

/// The constants of the method; the defaults are the paper's.
struct ClaimNovParams {
    double alpha = 0.5;                                   ///< rank discount of a(c)
    /// Weight of each dimension, indexed by ClaimDimension: problem, methodology, resource, result.
    double weights[n_claim_dimensions] = {0.4, 0.2, 0.1, 0.3};
    std::size_t k_min = 10;                               ///< k_d lower bound
    std::size_t k_max = 40;                               ///< k_d upper bound
    double k_fraction = 0.2;                              ///< k_d = round(k_fraction * n_d), clamped
    int strong_level = 4;                                 ///< a level at or above this is a strong match
    /// No-judge rule: fail when N(P) is below this and some claim has a strong match.
    double rule_novelty_threshold = 0.5;
};

/// Retrieval depth of a dimension with `n_papers` pool papers holding claims in it:
/// min(k_max, max(k_min, round(k_fraction * n_papers))); round half away from zero.
/// n_papers = 0 still gives k_min (the retrieval then finds nothing).
std::size_t retrieval_depth(std::size_t n_papers, const ClaimNovParams& params = {});

/// Entailment level 1..5 mapped to e = (level - 1) / 4 in [0, 1]. Throws UsageError outside 1..5.
double entailment_score(int level);

/// a(c) = sum alpha^(i-1) e_i / sum alpha^(i-1), with e sorted descending (the input order does
/// not matter). An empty list gives 0 (nothing anticipates the claim). Values must be in [0, 1].
double claim_anticipation(std::vector<double> e, double alpha = 0.5);

/// Per-claim evidence signals besides a(c).
struct ClaimSignals {
    double anticipation = 0;  ///< a(c)
    double max_e = 0;         ///< the highest e (0 without candidates)
    std::size_t n_strong = 0; ///< candidates at level >= strong_level ("breadth")
};

/// a(c), max e and the strong count of one claim's graded candidates (levels 1..5).
ClaimSignals claim_signals(const std::vector<int>& levels, const ClaimNovParams& params = {});

/// One claim's part in the proposal score.
struct ScoredClaim {
    ClaimDimension dimension = ClaimDimension::methodology;
    double importance = 1.0;  ///< imp(c) >= 0; uniform for proposals
    double anticipation = 0;  ///< a(c)
};

/// The proposal's aggregate.
struct ProposalNovelty {
    double anticipated = 0;     ///< A(P) = sum w_d imp(c) a(c)
    double anticipated_max = 0; ///< A_max(P) = sum w_d imp(c)
    /// N(P) = 1 - A / A_max in [0, 1]; 1 (nothing anticipated) when A_max is 0, e.g. no claims.
    double novelty = 1;
    double max_anticipation = 0;  ///< max over claims of a(c); 0 without claims
    /// Share of the claims (by count) with at least one strong match; 0 without claims.
    double breadth = 0;
};

/// Aggregates scored claims. `strong` flags, per claim, whether it has a strong match (same
/// length as `claims`, or empty for none).
ProposalNovelty proposal_novelty(const std::vector<ScoredClaim>& claims, const std::vector<bool>& strong = {},
                                 const ClaimNovParams& params = {});

/// One graded candidate as the rule sees it.
struct RuleCandidate {
    std::string paper;
    int level = 1;
    double sim = 0;
};

/// The no-judge verdict.
struct RuleVerdict {
    bool fail = false;
    std::optional<std::string> source;     ///< the paper blamed on fail; nothing on pass
    std::vector<std::size_t> established;  ///< on fail: claims (0-based) with a strong match, ascending
};

/// The score-plus-strong-match rule: fail when N(P) < rule_novelty_threshold and at least one claim
/// has a candidate at level >= strong_level. The source is the paper whose strong matches carry
/// the most claim weight (w_d * imp(c), each claim counted once per paper); ties go to the higher
/// summed e of its strong matches, then to the paper met first (claims in order, candidates in
/// order). On fail `established` lists the claims with any strong match; on pass it is empty.
/// `candidates` has one list per claim (same length as `claims`).
RuleVerdict rule_verdict(const std::vector<ScoredClaim>& claims,
                         const std::vector<std::vector<RuleCandidate>>& candidates, double novelty,
                         const ClaimNovParams& params = {});

}  // namespace novelty
