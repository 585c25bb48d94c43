#include "util/phase_totals.hpp"

#include <algorithm>
#include <cstdio>

namespace novelty {

namespace {

template <typename Entry>
Entry* find(std::vector<Entry>& entries, const std::string& name) {
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == name; });
    return it == entries.end() ? nullptr : &*it;
}

template <typename Entry>
const Entry* find(const std::vector<Entry>& entries, const std::string& name) {
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == name; });
    return it == entries.end() ? nullptr : &*it;
}

// Phase and counter names are identifiers chosen in code; quotes and backslashes are escaped
// anyway so the line stays valid JSON.
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

void PhaseTotals::add_seconds(const std::string& name, double seconds) {
    Phase* phase = find(phases_, name);
    if (phase == nullptr) {
        phases_.push_back(Phase{name});
        phase = &phases_.back();
    }
    phase->seconds += seconds;
    ++phase->spans;
}

void PhaseTotals::add_count(const std::string& name, std::size_t n) {
    Counter* counter = find(counters_, name);
    if (counter == nullptr) {
        counters_.push_back(Counter{name});
        counter = &counters_.back();
    }
    counter->value += n;
}

double PhaseTotals::seconds(const std::string& name) const {
    const Phase* phase = find(phases_, name);
    return phase ? phase->seconds : 0.0;
}

std::size_t PhaseTotals::spans(const std::string& name) const {
    const Phase* phase = find(phases_, name);
    return phase ? phase->spans : 0;
}

std::size_t PhaseTotals::count(const std::string& name) const {
    const Counter* counter = find(counters_, name);
    return counter ? counter->value : 0;
}

std::string PhaseTotals::json_line(const std::string& extra) const {
    std::string out = "{";
    if (!extra.empty()) out += extra + ", ";
    char number[64];
    out += "\"seconds\": {";
    for (std::size_t i = 0; i < phases_.size(); ++i) {
        std::snprintf(number, sizeof number, "%.6f", phases_[i].seconds);
        out += (i ? ", " : "") + quoted(phases_[i].name) + ": " + number;
    }
    out += "}, \"spans\": {";
    for (std::size_t i = 0; i < phases_.size(); ++i)
        out += (i ? ", " : "") + quoted(phases_[i].name) + ": " + std::to_string(phases_[i].spans);
    out += "}, \"counts\": {";
    for (std::size_t i = 0; i < counters_.size(); ++i)
        out += (i ? ", " : "") + quoted(counters_[i].name) + ": " + std::to_string(counters_[i].value);
    return out + "}}";
}

}  // namespace novelty
