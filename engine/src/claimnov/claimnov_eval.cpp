#include "novelty/claimnov/claimnov_eval.hpp"

#include <limits>

namespace novelty {

namespace {

constexpr const char* set_names[] = {"disguised", "source_out", "later_realized", "dispute", "hybrid"};

double rate(std::size_t count, std::size_t total) {
    return total == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(count) / static_cast<double>(total);
}

}  // namespace

const char* eval_set_name(EvalSet set) { return set_names[static_cast<int>(set)]; }

std::optional<EvalSet> parse_eval_set(const std::string& name) {
    for (int s = 0; s < 5; ++s)
        if (name == set_names[s]) return static_cast<EvalSet>(s);
    return std::nullopt;
}

ClaimNovCounts count_eval_items(const std::vector<EvalItem>& items) {
    ClaimNovCounts c;
    for (const EvalItem& item : items) {
        const bool names = !item.expected_paper.empty() && item.attributed_paper == item.expected_paper;
        switch (item.set) {
        case EvalSet::disguised:
            ++c.disguised;
            if (item.rejected) ++c.caught;
            if (item.rejected && names) ++c.named;
            break;
        case EvalSet::source_out:
            ++c.source_out;
            if (item.rejected) ++c.source_out_rejected;
            break;
        case EvalSet::later_realized:
            ++c.later_realized;
            if (item.rejected) ++c.false_alarms;
            break;
        case EvalSet::dispute:
            ++c.dispute;
            if (names) ++c.dispute_named;
            if (names && !item.rejected) ++c.dispute_named_on_pass;
            if (item.outcome == "accepted") {
                ++c.dispute_accepted;
                if (item.rejected) ++c.dispute_accepted_rejected;
            } else if (item.outcome == "rejected") {
                ++c.dispute_rejected;
                if (item.rejected) ++c.dispute_rejected_rejected;
            }
            break;
        case EvalSet::hybrid:
            ++c.hybrid;
            if (!item.rejected) ++c.hybrid_passed;
            if (names) ++c.hybrid_named;
            if (names && !item.rejected) ++c.hybrid_pass_and_named;
            break;
        }
    }
    return c;
}

ClaimNovMetrics claimnov_metrics(const ClaimNovCounts& c) {
    ClaimNovMetrics m{};
    m.catch_rate = rate(c.caught, c.disguised);
    m.named_rate = rate(c.named, c.disguised);
    m.source_out_rate = rate(c.source_out_rejected, c.source_out);
    m.false_alarm_rate = rate(c.false_alarms, c.later_realized);
    m.j = m.catch_rate - m.false_alarm_rate;
    m.delta = m.catch_rate - m.source_out_rate;
    m.reject_accepted = rate(c.dispute_accepted_rejected, c.dispute_accepted);
    m.reject_rejected = rate(c.dispute_rejected_rejected, c.dispute_rejected);
    m.dispute_named_rate = rate(c.dispute_named, c.dispute);
    m.dispute_named_on_pass = rate(c.dispute_named_on_pass, c.dispute);
    m.hybrid_pass_rate = rate(c.hybrid_passed, c.hybrid);
    m.hybrid_named_rate = rate(c.hybrid_named, c.hybrid);
    m.hybrid_pass_and_named = rate(c.hybrid_pass_and_named, c.hybrid);
    return m;
}

}  // namespace novelty
