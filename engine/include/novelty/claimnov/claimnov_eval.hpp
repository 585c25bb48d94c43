// Evaluating a novelty check the ClaimNov way (docs/claimnov.md): catch rate, named source,
// rejection after the source is removed, false alarms, J and Δ; reject rates of accepted and
// rejected papers in a dispute set; pass-and-name for hybrids. Pure counting, no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

/// The evaluation sets an item can belong to.
enum class EvalSet { disguised, source_out, later_realized, dispute, hybrid };

/// "disguised", "source_out", "later_realized", "dispute", "hybrid".
const char* eval_set_name(EvalSet set);
std::optional<EvalSet> parse_eval_set(const std::string& name);

/// One judged item: what the label says and what the check decided.
struct EvalItem {
    EvalSet set = EvalSet::disguised;
    /// The paper that should be named: the source of a disguise, paper B of a dispute or hybrid;
    /// "" when none.
    std::string expected_paper;
    /// Dispute sets only: the paper's real outcome, "accepted" or "rejected" ("" when unknown).
    std::string outcome;
    bool rejected = false;           ///< the check said fail
    /// The paper the check points to: its verdict source, else its top profile paper; "" none.
    std::string attributed_paper;
};

/// Counts per set; a rate is a count over its set's size (NaN when the set is empty).
struct ClaimNovCounts {
    std::size_t disguised = 0, caught = 0, named = 0;
    std::size_t source_out = 0, source_out_rejected = 0;
    std::size_t later_realized = 0, false_alarms = 0;
    std::size_t dispute_accepted = 0, dispute_accepted_rejected = 0;
    std::size_t dispute_rejected = 0, dispute_rejected_rejected = 0;
    std::size_t dispute = 0, dispute_named = 0, dispute_named_on_pass = 0;
    std::size_t hybrid = 0, hybrid_passed = 0, hybrid_named = 0, hybrid_pass_and_named = 0;
};

/// Tallies items. "named" for a disguise means rejected and attributed to the expected paper;
/// for disputes and hybrids "named" is attribution whatever the decision.
ClaimNovCounts count_eval_items(const std::vector<EvalItem>& items);

/// Rates and the two summary numbers. Every field is NaN when its denominator is 0.
struct ClaimNovMetrics {
    double catch_rate;            ///< caught / disguised
    double named_rate;            ///< named / disguised
    double source_out_rate;       ///< source_out_rejected / source_out
    double false_alarm_rate;      ///< false_alarms / later_realized
    double j;                     ///< catch_rate - false_alarm_rate
    double delta;                 ///< catch_rate - source_out_rate
    double reject_accepted;       ///< dispute_accepted_rejected / dispute_accepted
    double reject_rejected;       ///< dispute_rejected_rejected / dispute_rejected
    double dispute_named_rate;    ///< dispute_named / dispute
    double dispute_named_on_pass; ///< dispute_named_on_pass / dispute
    double hybrid_pass_rate;      ///< hybrid_passed / hybrid
    double hybrid_named_rate;     ///< hybrid_named / hybrid
    double hybrid_pass_and_named; ///< hybrid_pass_and_named / hybrid
};

ClaimNovMetrics claimnov_metrics(const ClaimNovCounts& counts);

}  // namespace novelty
