#include "scoring/density_plan.hpp"

#include "util/message_text.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace novelty {

namespace {

/// Each row's missing limits, ascending, duplicates dropped.
std::map<std::size_t, std::vector<std::size_t>> limits_by_row(std::vector<MissingDensity>& missing) {
    std::sort(missing.begin(), missing.end(),
              [](const MissingDensity& a, const MissingDensity& b) { return std::tie(a.row, a.limit) < std::tie(b.row, b.limit); });
    std::map<std::size_t, std::vector<std::size_t>> by_row;
    for (const MissingDensity& m : missing) {
        std::vector<std::size_t>& limits = by_row[m.row];
        if (limits.empty() || limits.back() != m.limit) limits.push_back(m.limit);
    }
    return by_row;
}

}  // namespace

DensityPlan plan_densities(std::vector<MissingDensity> missing, double pair_weight) {
    DensityPlan plan;
    std::map<std::size_t, std::vector<std::size_t>> by_row = limits_by_row(missing);
    // Per limit, descending: the rows whose largest limit still to search it is, and what a join
    // of it would save them (the segment from their next lower limit).
    std::map<std::size_t, std::vector<std::size_t>, std::greater<>> rows_at;
    for (const auto& [row, limits] : by_row) {
        plan.missing += limits.size();
        plan.search_cost += static_cast<double>(limits.back());
        for (std::size_t limit : limits) rows_at[limit].push_back(row);
    }
    plan.prefixes = rows_at.size();
    for (const auto& [limit, rows] : rows_at) {
        PlannedJoin join;
        join.prefix = limit;
        join.rows_reached = rows.size();
        join.join_cost = pair_weight * static_cast<double>(limit) * static_cast<double>(limit - 1) / 2.0;
        for (std::size_t row : rows) {
            const std::vector<std::size_t>& limits = by_row[row];
            if (limits.empty() || limits.back() != limit) continue;  // searched beyond this prefix anyway
            join.search_cost += static_cast<double>(limit - (limits.size() > 1 ? limits[limits.size() - 2] : 0));
        }
        if (join.search_cost <= join.join_cost) continue;
        for (std::size_t row : rows) {
            std::vector<std::size_t>& limits = by_row[row];
            limits.erase(std::remove(limits.begin(), limits.end(), limit), limits.end());
        }
        plan.joins.push_back(join);
    }
    return plan;
}

std::string DensityPlan::summary() const {
    if (missing == 0) return "from the store";
    std::size_t joined = 0;
    std::string out;
    for (const PlannedJoin& join : joins) {
        out += (out.empty() ? "" : " + ") + std::string("self-join of ") + thousands(join.prefix) + " rows (" +
               thousands(join.rows_reached) + " reached)";
        joined += join.rows_reached;
    }
    const std::size_t searched = missing - std::min(missing, joined);
    if (out.empty()) return "on demand (" + thousands(missing) + " lists searched)";
    if (searched > 0) out += " + on demand (up to " + thousands(searched) + " lists searched)";
    return out;
}

}  // namespace novelty
