#include "novelty/claimnov/claimnov.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>

namespace novelty {

namespace {

constexpr const char* dimension_names[n_claim_dimensions] = {"problem", "methodology", "resource", "result"};

double weight_of(const ScoredClaim& claim, const ClaimNovParams& params) {
    return params.weights[static_cast<std::size_t>(claim.dimension)] * claim.importance;
}

}  // namespace

const char* dimension_name(ClaimDimension dimension) { return dimension_names[static_cast<std::size_t>(dimension)]; }

std::optional<ClaimDimension> parse_dimension(const std::string& name) {
    std::string s;
    for (char c : name)
        if (!std::isspace(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::size_t d = 0; d < n_claim_dimensions; ++d)
        if (s == dimension_names[d]) return static_cast<ClaimDimension>(d);
    return std::nullopt;
}

std::size_t retrieval_depth(std::size_t n_papers, const ClaimNovParams& params) {
    const auto scaled = static_cast<std::size_t>(std::llround(params.k_fraction * static_cast<double>(n_papers)));
    return std::min(params.k_max, std::max(params.k_min, scaled));
}

double entailment_score(int level) {
    if (level < 1 || level > 5) throw UsageError("entailment level " + std::to_string(level) + " is outside 1..5");
    return (level - 1) / 4.0;
}

double claim_anticipation(std::vector<double> e, double alpha) {
    if (e.empty()) return 0.0;
    if (!(alpha > 0.0) || !std::isfinite(alpha)) throw UsageError("the rank discount alpha must be a positive number");
    for (double x : e)
        if (!(x >= 0.0 && x <= 1.0)) throw UsageError("entailment scores must lie in [0, 1]");
    std::sort(e.begin(), e.end(), std::greater<>());
    double numerator = 0.0, denominator = 0.0, discount = 1.0;
    for (double x : e) {
        numerator += discount * x;
        denominator += discount;
        discount *= alpha;
    }
    return numerator / denominator;
}

ClaimSignals claim_signals(const std::vector<int>& levels, const ClaimNovParams& params) {
    ClaimSignals signals;
    std::vector<double> e;
    e.reserve(levels.size());
    for (int level : levels) {
        e.push_back(entailment_score(level));
        signals.max_e = std::max(signals.max_e, e.back());
        if (level >= params.strong_level) ++signals.n_strong;
    }
    signals.anticipation = claim_anticipation(std::move(e), params.alpha);
    return signals;
}

ProposalNovelty proposal_novelty(const std::vector<ScoredClaim>& claims, const std::vector<bool>& strong,
                                 const ClaimNovParams& params) {
    if (!strong.empty() && strong.size() != claims.size())
        throw UsageError("proposal_novelty: one strong flag per claim is needed");
    ProposalNovelty out;
    std::size_t n_strong = 0;
    for (std::size_t i = 0; i < claims.size(); ++i) {
        const ScoredClaim& c = claims[i];
        if (!(c.importance >= 0.0)) throw UsageError("claim importance must be non-negative");
        const double w = weight_of(c, params);
        out.anticipated += w * c.anticipation;
        out.anticipated_max += w;
        out.max_anticipation = std::max(out.max_anticipation, c.anticipation);
        if (!strong.empty() && strong[i]) ++n_strong;
    }
    out.novelty = out.anticipated_max > 0.0 ? 1.0 - out.anticipated / out.anticipated_max : 1.0;
    out.novelty = std::clamp(out.novelty, 0.0, 1.0);
    out.breadth = claims.empty() ? 0.0 : static_cast<double>(n_strong) / static_cast<double>(claims.size());
    return out;
}

RuleVerdict rule_verdict(const std::vector<ScoredClaim>& claims,
                         const std::vector<std::vector<RuleCandidate>>& candidates, double novelty,
                         const ClaimNovParams& params) {
    if (candidates.size() != claims.size()) throw UsageError("rule_verdict: one candidate list per claim is needed");
    struct PaperTally {
        double weight = 0;
        double e_sum = 0;
        std::size_t first_seen = 0;
    };
    std::map<std::string, PaperTally> tally;
    std::size_t order = 0;
    std::vector<std::size_t> established;
    for (std::size_t c = 0; c < claims.size(); ++c) {
        std::map<std::string, bool> counted;  // each claim's weight counts once per paper
        for (const RuleCandidate& cand : candidates[c]) {
            ++order;
            if (cand.level < params.strong_level) continue;
            if (established.empty() || established.back() != c) established.push_back(c);
            auto [it, fresh] = tally.try_emplace(cand.paper);
            if (fresh) it->second.first_seen = order;
            it->second.e_sum += entailment_score(cand.level);
            if (!counted[cand.paper]) {
                counted[cand.paper] = true;
                it->second.weight += weight_of(claims[c], params);
            }
        }
    }
    RuleVerdict verdict;
    verdict.fail = !established.empty() && novelty < params.rule_novelty_threshold;
    if (!verdict.fail) return verdict;
    verdict.established = established;
    const std::pair<const std::string, PaperTally>* best = nullptr;
    for (const auto& entry : tally) {
        if (best == nullptr) {
            best = &entry;
            continue;
        }
        const PaperTally& a = entry.second;
        const PaperTally& b = best->second;
        if (a.weight > b.weight || (a.weight == b.weight && (a.e_sum > b.e_sum || (a.e_sum == b.e_sum && a.first_seen < b.first_seen))))
            best = &entry;
    }
    verdict.source = best->first;
    return verdict;
}

}  // namespace novelty
