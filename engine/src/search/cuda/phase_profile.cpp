#include "search/cuda/phase_profile.hpp"

#include <cstdio>
#include <cstdlib>

#include "search/cuda/device_memory.hpp"

namespace novelty::cuda {

PhaseProfile::PhaseProfile(dev::Device& device) : device_(device) {
    const char* path = std::getenv("NOVELTY_CUDA_PROFILE");
    if (path != nullptr) path_ = path;
}

PhaseProfile::~PhaseProfile() {
    for (Span& span : spans_) {
        device_.destroy(span.start);
        device_.destroy(span.stop);
    }
}

void PhaseProfile::start_call() {
    used_ = 0;
    host_ = PhaseTotals();
}

int PhaseProfile::begin(dev::Stream stream) {
    if (!enabled()) return -1;
    if (used_ == spans_.size()) {
        Span span;
        span.start = device_.make_event(true);
        span.stop = device_.make_event(true);
        spans_.push_back(span);
    }
    spans_[used_].name = nullptr;
    device_.record(spans_[used_].start, stream);
    return static_cast<int>(used_++);
}

void PhaseProfile::end(int handle, const char* name, dev::Stream stream) {
    if (handle < 0) return;
    Span& span = spans_[static_cast<std::size_t>(handle)];
    span.name = name;
    device_.record(span.stop, stream);
}

void PhaseProfile::add_host(const char* name, double seconds) {
    if (enabled()) host_.add_seconds(name, seconds);
}

void PhaseProfile::add_count(const char* name, std::size_t n) {
    if (enabled()) host_.add_count(name, n);
}

void PhaseProfile::finish_call(const std::string& extra) {
    if (!enabled()) return;
    PhaseTotals totals;
    for (std::size_t i = 0; i < used_; ++i) {
        const Span& span = spans_[i];
        if (span.name == nullptr) continue;  // begun, never ended (an exception in between)
        device_.synchronize(span.stop);
        const float ms = device_.elapsed_ms(span.start, span.stop);
        totals.add_seconds(span.name, ms / 1000.0);
    }
    const std::string line = "{" + (extra.empty() ? std::string() : extra + ", ") + "\"device\": " +
                             totals.json_line() + ", \"host\": " + host_.json_line() + "}";
    std::FILE* file = std::fopen(path_.c_str(), "a");
    if (file == nullptr || std::fprintf(file, "%s\n", line.c_str()) < 0 || std::fclose(file) != 0)
        std::fprintf(stderr, "novelty: cannot append the CUDA profile to %s\n", path_.c_str());
}

}  // namespace novelty::cuda
