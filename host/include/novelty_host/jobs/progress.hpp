// Progress reporting on stderr for long commands: a redrawn bar on a terminal, a plain line every
// few seconds otherwise (logs, CI), nothing when quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace novelty::host {

class ProgressBar {
public:
    /// `label` starts each line; `unit` names what is counted ("papers", "rows", "MB").
    ProgressBar(std::string label, std::string unit, bool quiet = false);
    ~ProgressBar();

    /// Reports `done` of `total` (total 0 = unknown). Cheap to call often: draws at most ~10
    /// times a second on a terminal and every 5 seconds otherwise. `note` is appended as is.
    void update(std::uint64_t done, std::uint64_t total, const std::string& note = "");
    /// Draws the final state and ends the line (nothing when update() was never called).
    void finish(const std::string& note = "");

private:
    void draw(std::uint64_t done, std::uint64_t total, const std::string& note, bool final);

    std::string label_;
    std::string unit_;
    bool quiet_;
    bool terminal_;
    bool drawn_ = false;
    bool finished_ = false;
    bool updated_ = false;
    std::uint64_t last_done_ = 0;
    std::uint64_t last_total_ = 0;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace novelty::host
