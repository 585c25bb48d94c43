#include "novelty_host/jobs/progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace novelty::host {

ProgressBar::ProgressBar(std::string label, std::string unit, bool quiet)
    : label_(std::move(label)), unit_(std::move(unit)), quiet_(quiet), terminal_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

ProgressBar::~ProgressBar() {
    if (drawn_ && !finished_ && terminal_) std::fputc('\n', stderr);
}

void ProgressBar::update(std::uint64_t done, std::uint64_t total, const std::string& note) {
    updated_ = true;
    last_done_ = done;
    last_total_ = total;
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    const auto interval = terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
    if (drawn_ && now - last_draw_ < interval) return;
    if (!drawn_ && !terminal_ && now - start_ < interval) return;
    last_draw_ = now;
    draw(done, total, note, false);
}

void ProgressBar::finish(const std::string& note) {
    if (finished_) return;
    finished_ = true;
    if (quiet_ || !updated_) return;  // nothing was reported: nothing to finish
    draw(last_done_, last_total_, note, true);
}

void ProgressBar::draw(std::uint64_t done, std::uint64_t total, const std::string& note, bool final) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    char line[256];
    if (total > 0) {
        const double fraction = done >= total ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
        constexpr int width = 24;
        char bar[width + 1];
        const int filled = static_cast<int>(fraction * width);
        for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
        bar[width] = '\0';
        std::snprintf(line, sizeof line, "%s [%s] %5.1f%% %llu/%llu %s, %.0f/s, %.1fs", label_.c_str(), bar,
                      100.0 * fraction, static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                      unit_.c_str(), rate, seconds);
    } else {
        std::snprintf(line, sizeof line, "%s %llu %s, %.0f/s, %.1fs", label_.c_str(),
                      static_cast<unsigned long long>(done), unit_.c_str(), rate, seconds);
    }
    std::string text = line;
    if (!note.empty()) text += " " + note;
    if (terminal_) std::fprintf(stderr, "\r\033[K%s%s", text.c_str(), final ? "\n" : "");
    else std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
    drawn_ = true;
}

}  // namespace novelty::host
