// Where a CUDA search call spends its time, for profiling runs: with NOVELTY_CUDA_PROFILE set to
// a file path, each call appends one JSON line (PhaseTotals) to that file. Device phases are
// timed with CUDA events recorded on the stream that runs them (no extra synchronisation, so
// overlap between streams is kept and phases on different streams may overlap in time); host
// phases with the steady clock. When the variable is unset every method is a no-op. Internal
// to engine/src/search/cuda.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "util/phase_totals.hpp"

namespace novelty::cuda {

class PhaseProfile {
public:
    /// Reads NOVELTY_CUDA_PROFILE once; spans are timed with `device`'s events.
    explicit PhaseProfile(dev::Device& device);
    ~PhaseProfile();
    PhaseProfile(const PhaseProfile&) = delete;
    PhaseProfile& operator=(const PhaseProfile&) = delete;

    bool enabled() const { return !path_.empty(); }

    /// Starts a call: clears the previous call's spans.
    void start_call();
    /// Marks the start of a device span on `stream`; returns its handle (-1 when disabled).
    int begin(dev::Stream stream);
    /// Ends span `handle` on `stream` and files it under phase `name`.
    void end(int handle, const char* name, dev::Stream stream);
    /// Adds host seconds to phase `name`, and counts.
    void add_host(const char* name, double seconds);
    void add_count(const char* name, std::size_t n = 1);
    /// Waits for every recorded span, sums them and appends one line to the file:
    /// {<extra>, "device": {...}, "host": {...}}, each part a PhaseTotals::json_line (`extra`:
    /// JSON members, may be empty). A failure to write the file is reported on stderr.
    void finish_call(const std::string& extra);

private:
    struct Span {
        dev::Event start = nullptr, stop = nullptr;
        const char* name = nullptr;
    };
    dev::Device& device_;
    std::string path_;
    std::vector<Span> spans_;  ///< events are created once and reused by later calls
    std::size_t used_ = 0;
    PhaseTotals host_;
};

/// A device span that ends when it leaves scope (or at end()): DeviceSpan span(profile, stream,
/// "gemm"). A no-op when the profile is off. end() may rename it (the branch taken decides).
class DeviceSpan {
public:
    DeviceSpan(PhaseProfile& profile, dev::Stream stream, const char* name)
        : profile_(profile), stream_(stream), name_(name), handle_(profile.begin(stream)) {}
    ~DeviceSpan() {
        try {
            end();
        } catch (...) {  // unwinding from another error: that one is reported
        }
    }
    DeviceSpan(const DeviceSpan&) = delete;
    DeviceSpan& operator=(const DeviceSpan&) = delete;
    void end(const char* name = nullptr) {
        if (handle_ >= 0) profile_.end(handle_, name ? name : name_, stream_);
        handle_ = -1;
    }

private:
    PhaseProfile& profile_;
    dev::Stream stream_;
    const char* name_;
    int handle_;
};

/// Host seconds from construction to the end of the scope, added to phase `name`.
class HostSpan {
public:
    HostSpan(PhaseProfile& profile, const char* name)
        : profile_(profile), name_(name), start_(std::chrono::steady_clock::now()) {}
    ~HostSpan() {
        profile_.add_host(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }
    HostSpan(const HostSpan&) = delete;
    HostSpan& operator=(const HostSpan&) = delete;

private:
    PhaseProfile& profile_;
    const char* name_;
    std::chrono::steady_clock::time_point start_;
};

/// Seconds since `since` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace novelty::cuda
