// Request counters and latency histograms for GET /metrics, in the Prometheus text format
// (version 0.0.4). Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace novelty::host {

class ServerMetrics {
public:
    /// Upper bounds (seconds) of the latency histogram buckets, ascending; +Inf is implied.
    static const std::vector<double>& bucket_bounds();

    /// Counts one answered request of `endpoint` (a route name such as "score") with its status
    /// and the seconds it took.
    void record(const std::string& endpoint, int status, double seconds);

    /// The request families (novelty_http_requests_total, novelty_http_request_duration_seconds),
    /// followed by `gauges_and_counters`: lines the server adds (batches, in-flight, jobs, corpus).
    std::string render(const std::string& gauges_and_counters) const;

private:
    struct Histogram {
        std::vector<std::size_t> buckets;  ///< per bound, not cumulative
        std::size_t count = 0;
        double sum = 0;
    };
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, std::size_t> requests_;
    std::map<std::string, Histogram> latency_;
};

}  // namespace novelty::host
