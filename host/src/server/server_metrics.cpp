#include "server/server_metrics.hpp"

#include <cstdio>

namespace novelty::host {

const std::vector<double>& ServerMetrics::bucket_bounds() {
    static const std::vector<double> bounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,    0.25,  0.5,    1,     2.5,  5,     10};
    return bounds;
}

void ServerMetrics::record(const std::string& endpoint, int status, double seconds) {
    const auto& bounds = bucket_bounds();
    std::lock_guard lock(mutex_);
    ++requests_[{endpoint, status}];
    Histogram& h = latency_[endpoint];
    if (h.buckets.empty()) h.buckets.assign(bounds.size(), 0);
    for (std::size_t b = 0; b < bounds.size(); ++b)
        if (seconds <= bounds[b]) {
            ++h.buckets[b];
            break;
        }
    ++h.count;
    h.sum += seconds;
}

std::string ServerMetrics::render(const std::string& gauges_and_counters) const {
    const auto& bounds = bucket_bounds();
    std::string out;
    char line[256];
    std::lock_guard lock(mutex_);
    out += "# HELP novelty_http_requests_total HTTP requests answered, by endpoint and status code.\n"
           "# TYPE novelty_http_requests_total counter\n";
    for (const auto& [key, count] : requests_) {
        std::snprintf(line, sizeof line, "novelty_http_requests_total{endpoint=\"%s\",code=\"%d\"} %zu\n",
                      key.first.c_str(), key.second, count);
        out += line;
    }
    out += "# HELP novelty_http_request_duration_seconds Time from a request's arrival to its reply, by endpoint.\n"
           "# TYPE novelty_http_request_duration_seconds histogram\n";
    for (const auto& [endpoint, h] : latency_) {
        std::size_t cumulative = 0;
        for (std::size_t b = 0; b < bounds.size(); ++b) {
            cumulative += h.buckets[b];
            std::snprintf(line, sizeof line, "novelty_http_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %zu\n",
                          endpoint.c_str(), bounds[b], cumulative);
            out += line;
        }
        std::snprintf(line, sizeof line,
                      "novelty_http_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %zu\n"
                      "novelty_http_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n"
                      "novelty_http_request_duration_seconds_count{endpoint=\"%s\"} %zu\n",
                      endpoint.c_str(), h.count, endpoint.c_str(), h.sum, endpoint.c_str(), h.count);
        out += line;
    }
    return out + gauges_and_counters;
}

}  // namespace novelty::host
