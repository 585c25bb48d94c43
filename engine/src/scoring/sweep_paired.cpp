// Paired comparisons of sweep variants (score_sweep.hpp): AUROC differences with paired
// bootstrap intervals, over all ideas and per group.
#include "scoring/score_sweep.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>

namespace novelty {

namespace {

/// `text` cut at the separator characters that lie outside square brackets.
std::vector<std::string> split_outside_brackets(const std::string& text, char separator) {
    std::vector<std::string> parts(1);
    int depth = 0;
    for (char c : text) {
        if (c == '[') ++depth;
        if (c == ']' && depth > 0) --depth;
        if (c == separator && depth == 0) parts.emplace_back();
        else parts.back() += c;
    }
    return parts;
}

std::string trimmed(const std::string& s) {
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

const SweepCandidate& candidate_named(const std::vector<SweepCandidate>& candidates, const std::string& name) {
    for (const SweepCandidate& c : candidates)
        if (c.name == name) return c;
    throw UsageError("no variant is named '" + name + "' (names as the sweep prints them, e.g. rnd[cos,P=100,Q=50])",
                     "paired");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_variant_pairs(const std::string& text) {
    std::vector<std::pair<std::string, std::string>> pairs;
    if (trimmed(text).empty()) return pairs;
    for (const std::string& item : split_outside_brackets(text, ',')) {
        const std::vector<std::string> sides = split_outside_brackets(item, ':');
        if (sides.size() != 2 || trimmed(sides[0]).empty() || trimmed(sides[1]).empty())
            throw UsageError("'" + item + "' is not a pair A:B of variant names", "paired");
        pairs.emplace_back(trimmed(sides[0]), trimmed(sides[1]));
    }
    return pairs;
}

std::vector<PairedComparison> paired_comparisons(const std::vector<SweepCandidate>& candidates,
                                                 std::span<const int> labels, std::span<const std::string> groups,
                                                 const std::vector<std::pair<std::string, std::string>>& pairs,
                                                 const SweepOptions& options) {
    std::vector<std::string> names(groups.begin(), groups.end());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    names.insert(names.begin(), "");
    std::vector<PairedComparison> out;
    for (const auto& [a_name, b_name] : pairs) {
        const SweepCandidate &a = candidate_named(candidates, a_name), &b = candidate_named(candidates, b_name);
        if (a.scores.size() != labels.size() || b.scores.size() != labels.size() || groups.size() != labels.size())
            throw UsageError("paired comparison of " + a_name + " and " + b_name + ": scores, labels and groups differ in length");
        PairedComparison cmp{a_name, b_name, {}, {}};
        for (const std::string& g : names) {
            std::vector<double> sa, sb;
            std::vector<int> l;
            for (std::size_t i = 0; i < labels.size(); ++i)
                if (g.empty() || groups[i] == g) {
                    sa.push_back(a.scores[i]);
                    sb.push_back(b.scores[i]);
                    l.push_back(labels[i]);
                }
            cmp.groups.push_back(g.empty() ? "all" : g);
            cmp.result.push_back(paired_auroc_difference(sa, sb, l, options.bootstrap, options.seed));
        }
        out.push_back(std::move(cmp));
    }
    return out;
}

}  // namespace novelty
