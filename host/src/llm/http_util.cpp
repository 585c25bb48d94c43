#include "llm/http_util.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace novelty::host::detail {

namespace {

constexpr std::size_t body_excerpt_bytes = 300;

std::optional<double> parse_seconds(const std::string& text) {
    if (text.empty()) return std::nullopt;
    for (char c : text)
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

}  // namespace

std::string lookup_env(const std::function<const char*(const char*)>& lookup, const char* name) {
    const char* value = lookup ? lookup(name) : std::getenv(name);
    return value != nullptr ? std::string(value) : std::string();
}

std::string format_seconds(double seconds) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g s", seconds);
    return buf;
}

std::string to_lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string& s) {
    std::size_t begin = 0, end = s.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(s[begin]))) ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
    return s.substr(begin, end - begin);
}

std::string body_excerpt(const std::string& body) {
    if (body.empty()) return "(empty body)";
    std::size_t n = std::min(body.size(), body_excerpt_bytes);
    if (n < body.size())
        while (n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0) == 0x80) --n;
    std::string out = trim(body.substr(0, n));
    for (char& c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F) c = ' ';
    }
    if (n < body.size()) out += "...";
    return out.empty() ? "(blank body)" : out;
}

std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers) {
    if (auto it = headers.find("retry-after-ms"); it != headers.end())
        if (auto ms = parse_seconds(trim(it->second))) return *ms / 1000.0;
    auto it = headers.find("retry-after");
    if (it == headers.end()) return std::nullopt;
    const std::string value = trim(it->second);
    if (auto seconds = parse_seconds(value)) return *seconds;
    const std::time_t when = curl_getdate(value.c_str(), nullptr);
    if (when == static_cast<std::time_t>(-1)) return std::nullopt;
    return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

double retry_backoff(int retry, std::optional<double> server_wait, double initial_seconds, double cap_seconds,
                     std::minstd_rand& rng) {
    if (server_wait) return std::min(*server_wait, cap_seconds);
    const double nominal = std::min(initial_seconds * std::ldexp(1.0, std::min(retry, 60)), cap_seconds);
    std::uniform_real_distribution<double> jitter(0.0, 0.1);
    return nominal * (1.0 - jitter(rng));
}

bool retryable_status(long status) { return status == 408 || status == 429 || (status >= 500 && status <= 599); }

bool retryable_curl_error(CURLcode code) {
    switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

void add_header_line(const std::string& line, std::map<std::string, std::string>& headers) {
    if (line.rfind("HTTP/", 0) == 0) {
        headers.clear();
    } else if (const auto colon = line.find(':'); colon != std::string::npos) {
        headers[to_lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    }
}

}  // namespace novelty::host::detail
