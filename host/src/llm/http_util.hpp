// Small HTTP helpers shared by the host clients: header parsing, Retry-After, retry rules and
// error-message excerpts.
#pragma once

#include <curl/curl.h>

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>

namespace novelty::host::detail {

/// The value of environment variable `name` through `lookup` (std::getenv when empty); "" when
/// unset.
std::string lookup_env(const std::function<const char*(const char*)>& lookup, const char* name);
/// "1.5 s".
std::string format_seconds(double seconds);
/// Lower-cases ASCII letters.
std::string to_lower(std::string s);
/// Strips leading and trailing whitespace.
std::string trim(const std::string& s);
/// The start of a body for one line of an error message (at most 300 bytes, control characters
/// replaced, "..." marking a cut).
std::string body_excerpt(const std::string& body);
/// The wait a server asked for: "retry-after-ms" when valid, else "retry-after" as seconds or an
/// HTTP date (a past date means 0). Header names must be lower-case.
std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers);
/// The wait before retry `retry` (0-based): the server's wait when it gave one, else
/// initial_seconds * 2^retry less up to 10% jitter drawn from `rng`; both capped at cap_seconds.
double retry_backoff(int retry, std::optional<double> server_wait, double initial_seconds, double cap_seconds,
                     std::minstd_rand& rng);
/// 408, 429 and 5xx.
bool retryable_status(long status);
/// Connection, timeout and transfer failures.
bool retryable_curl_error(CURLcode code);
/// Parses one header line into `headers` (name lower-cased); a status line clears them.
void add_header_line(const std::string& line, std::map<std::string, std::string>& headers);

}  // namespace novelty::host::detail
