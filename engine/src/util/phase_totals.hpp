// Time and counts per named phase of one backend call, for profiling runs (the CUDA backend's
// NOVELTY_CUDA_PROFILE). Plain C++ so that its arithmetic and its JSON line are tested on the CPU.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace novelty {

class PhaseTotals {
public:
    /// Adds `seconds` to phase `name` (created at 0 on first use) and counts one span of it.
    void add_seconds(const std::string& name, double seconds);
    /// Adds `n` to counter `name` (created at 0 on first use).
    void add_count(const std::string& name, std::size_t n = 1);

    /// Seconds summed for `name` (0 when never added), and how many spans made them.
    double seconds(const std::string& name) const;
    std::size_t spans(const std::string& name) const;
    std::size_t count(const std::string& name) const;

    /// One JSON object on one line: {"seconds": {name: s, ...}, "spans": {...}, "counts": {...}},
    /// names in first-use order, seconds with 6 decimals; `extra` (already JSON members, e.g.
    /// "\"rows\": 5") goes first when not empty.
    std::string json_line(const std::string& extra = {}) const;

private:
    struct Phase {
        std::string name;
        double seconds = 0;
        std::size_t spans = 0;
    };
    struct Counter {
        std::string name;
        std::size_t value = 0;
    };
    std::vector<Phase> phases_;
    std::vector<Counter> counters_;
};

}  // namespace novelty
