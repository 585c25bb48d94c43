#include "novelty_host/llm/http_embedder.hpp"

#include "llm/http_util.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include "novelty/util/error.hpp"

namespace novelty::host {

namespace {

using detail::format_seconds;
using detail::lookup_env;
using detail::add_header_line;
using detail::body_excerpt;
using detail::retry_after_seconds;
using detail::retryable_curl_error;
using detail::retryable_status;
using detail::to_lower;

using json = nlohmann::json;

/// How much of a response body goes into an error message.
/// Fraction of each computed backoff taken off at random, so that clients do not retry in step.

/// What to fix, for statuses that are not retried.
std::string status_hint(long status) {
    switch (status) {
    case 401:
    case 403:
        return "check the API key (--embed-api-key, NOVELTY_EMBED_API_KEY or OPENAI_API_KEY)";
    case 404:
        return "check the base URL (it usually ends in /v1, e.g. http://host:8080/v1) and the model name";
    case 413:
        return "the request is too large: lower the batch size";
    case 400:
    case 422:
        return "the server rejected the request: check the model name, and that the texts fit the "
               "model's input limit (or lower the batch size)";
    default:
        if (status >= 300 && status < 400) return "the server redirects: use the final URL as the base URL";
        return "check the base URL, the model name and the API key";
    }
}

std::once_flag curl_global_once;

/// One HTTP exchange's outcome.
struct HttpResult {
    CURLcode code = CURLE_OK;
    std::string curl_message;
    long status = 0;
    std::string body;
    std::map<std::string, std::string> headers;  // names lower-cased; the last value wins
};

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
    static_cast<HttpResult*>(user)->body.append(data, size * count);
    return size * count;
}

std::size_t write_header(char* data, std::size_t size, std::size_t count, void* user) {
    // A status line starts a new response (after "100 Continue" or a redirect).
    add_header_line(std::string(data, size * count), static_cast<HttpResult*>(user)->headers);
    return size * count;
}

/// The embedding with index `i` (text `text` of the call) as `dim` floats, L2-normalised into
/// `row`; a non-number, a non-finite value or a zero or overflowing norm goes to `fail`.
void normalise_row(const json& embedding, std::size_t dim, std::size_t i, std::size_t text,
                   const std::function<void(const std::string&)>& fail, float* row) {
    double sum_squares = 0.0;
    for (std::size_t d = 0; d < dim; ++d) {
        const json& value = embedding[d];
        if (!value.is_number())
            fail("the embedding with index " + std::to_string(i) + " holds a non-number at position " + std::to_string(d));
        const double x = value.get<double>();
        const auto f = static_cast<float>(x);
        if (!std::isfinite(x) || !std::isfinite(f))
            fail("the embedding with index " + std::to_string(i) + " holds a non-finite value at position " +
                 std::to_string(d));
        row[d] = f;
        sum_squares += static_cast<double>(f) * static_cast<double>(f);
    }
    const double norm = std::sqrt(sum_squares);
    if (!(norm > 0.0) || !std::isfinite(norm))
        fail("the embedding with index " + std::to_string(i) + " (text " + std::to_string(text) + " of the call) is " +
             (norm > 0.0 ? "too large to normalise" : "all zeros"));
    const double scale = 1.0 / norm;
    for (std::size_t d = 0; d < dim; ++d) row[d] = static_cast<float>(row[d] * scale);
}

/// Reads and checks one answer: returns the batch's rows, in input order, L2-normalised.
/// `expected_dim` is 0 when no dimension is known yet. Throws Error naming `where`.
std::vector<float> parse_answer(const json& answer, std::size_t count, std::size_t expected_dim,
                                std::size_t first_text, const std::string& where,
                                const std::string& body, std::size_t& dim_out) {
    const std::function<void(const std::string&)> fail = [&](const std::string& problem) {
        throw Error(where + ": " + problem + "; body starts: " + body_excerpt(body));
    };
    if (!answer.is_object()) fail("the answer is not a JSON object");
    const auto data = answer.find("data");
    if (data == answer.end() || !data->is_array()) {
        if (answer.contains("error")) fail("the server answered with an error");
        fail("the answer has no \"data\" array (is this an OpenAI-compatible /embeddings endpoint?)");
    }
    if (data->size() != count) {
        fail("sent " + std::to_string(count) + " texts but got " + std::to_string(data->size()) +
             " embeddings");
    }

    std::vector<const json*> by_index(count, nullptr);
    std::size_t dim = expected_dim;
    std::size_t first_dim_position = 0;
    for (std::size_t position = 0; position < count; ++position) {
        const json& item = (*data)[position];
        const std::string at = "data[" + std::to_string(position) + "]";
        if (!item.is_object()) fail(at + " is not an object");
        const auto index = item.find("index");
        if (index == item.end() || !index->is_number_integer()) fail(at + " has no integer \"index\"");
        const auto i = index->get<std::int64_t>();
        if (i < 0 || static_cast<std::uint64_t>(i) >= count) {
            fail(at + " has index " + std::to_string(i) + ", outside 0.." + std::to_string(count - 1));
        }
        if (by_index[static_cast<std::size_t>(i)] != nullptr) {
            fail("index " + std::to_string(i) + " appears more than once");
        }
        const auto embedding = item.find("embedding");
        if (embedding == item.end() || !embedding->is_array()) {
            fail(at + " has no \"embedding\" array of numbers (a base64 string means the server "
                      "ignored encoding_format=float)");
        }
        if (embedding->empty()) fail(at + " has an empty embedding");
        if (dim == 0) {
            dim = embedding->size();
            first_dim_position = position;
        } else if (embedding->size() != dim) {
            if (expected_dim != 0) {
                fail(at + " has dimension " + std::to_string(embedding->size()) +
                     " but this embedder's earlier answers had dimension " + std::to_string(expected_dim) +
                     " (did the model behind the URL change?)");
            }
            fail(at + " has dimension " + std::to_string(embedding->size()) + " but data[" +
                 std::to_string(first_dim_position) + "] has dimension " + std::to_string(dim));
        }
        by_index[static_cast<std::size_t>(i)] = &*embedding;
    }
    for (std::size_t i = 0; i < count; ++i) {
        if (by_index[i] == nullptr) fail("index " + std::to_string(i) + " is missing");
    }

    std::vector<float> rows(count * dim);
    for (std::size_t i = 0; i < count; ++i) normalise_row(*by_index[i], dim, i, first_text + i, fail, rows.data() + i * dim);
    dim_out = dim;
    return rows;
}

}  // namespace

HttpEmbedderOptions http_embedder_options_from_env(HttpEmbedderOptions flags, const EnvironmentLookup& lookup) {
    if (flags.api_key.empty()) {
        flags.api_key = lookup_env(lookup, "NOVELTY_EMBED_API_KEY");
        if (flags.api_key.empty()) flags.api_key = lookup_env(lookup, "OPENAI_API_KEY");
    }
    if (flags.model.empty()) flags.model = lookup_env(lookup, "NOVELTY_EMBED_MODEL");
    return flags;
}

struct HttpEmbedder::Impl {
    HttpEmbedderOptions options;
    SleepFunction sleep;
    std::string url;
    CURL* curl = nullptr;
    curl_slist* headers = nullptr;
    std::size_t dim = 0;
    std::size_t requests = 0;
    std::minstd_rand rng{std::random_device{}()};
    char curl_error[CURL_ERROR_SIZE] = {};

    ~Impl() {
        if (headers != nullptr) curl_slist_free_all(headers);
        if (curl != nullptr) curl_easy_cleanup(curl);
    }

    /// One POST of `body`; never throws for network or HTTP failures (they are in the result).
    HttpResult post(const std::string& body) {
        HttpResult result;
        curl_error[0] = '\0';
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &result);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, &result);
        ++requests;
        result.code = curl_easy_perform(curl);
        if (result.code != CURLE_OK) {
            result.curl_message = curl_error[0] != '\0' ? std::string(curl_error) : curl_easy_strerror(result.code);
        } else {
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
        }
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, nullptr);
        return result;
    }

    /// The wait before retry `retry` (0-based): the server's Retry-After when given, else the
    /// exponential backoff less some jitter; both capped at max_backoff_seconds.
    double backoff(int retry, std::optional<double> server_wait) {
        return detail::retry_backoff(retry, server_wait, options.initial_backoff_seconds, options.max_backoff_seconds, rng);
    }

    /// Sends one batch with retries; returns its checked, normalised rows.
    std::vector<float> embed_batch(const std::vector<std::string>& texts, std::size_t first, std::size_t count) {
        json input = json::array();
        for (std::size_t i = first; i < first + count; ++i) input.push_back(texts[i].empty() ? std::string(" ") : texts[i]);
        json request = {{"model", options.model}, {"input", std::move(input)}, {"encoding_format", "float"}};
        // Invalid UTF-8 in a text becomes U+FFFD rather than failing the whole batch.
        const std::string body = request.dump(-1, ' ', false, json::error_handler_t::replace);

        const std::string where = "POST " + url + " (texts " + std::to_string(first) + ".." +
                                  std::to_string(first + count - 1) + ")";
        const int attempts = options.max_retries + 1;
        std::string last_problem;
        for (int attempt = 0; attempt < attempts; ++attempt) {
            HttpResult result = post(body);
            std::optional<double> server_wait;
            if (result.code != CURLE_OK) {
                if (!retryable_curl_error(result.code)) {
                    throw Error(where + ": " + result.curl_message + "; " + curl_hint(result.code));
                }
                last_problem = result.code == CURLE_OPERATION_TIMEDOUT
                                   ? "timed out after " + format_seconds(options.timeout_seconds) + " (" +
                                         result.curl_message +
                                         "); raise the timeout or lower the batch size, or check that the "
                                         "server is not overloaded"
                                   : result.curl_message + "; check that the server is running at " +
                                         options.base_url;
            } else if (result.status >= 200 && result.status < 300) {
                std::optional<json> answer;
                try {
                    answer = parse_json(result.body);
                } catch (const JsonError& e) {
                    // Retried: truncated bodies and proxies' HTML pages are usually transient.
                    last_problem = "HTTP " + std::to_string(result.status) + " but the body is not valid JSON (" +
                                   e.what() + "); body starts: " + body_excerpt(result.body);
                }
                if (answer) {
                    std::size_t batch_dim = 0;
                    auto rows = parse_answer(*answer, count, dim, first, where, result.body, batch_dim);
                    dim = batch_dim;
                    return rows;
                }
            } else if (retryable_status(result.status)) {
                server_wait = retry_after_seconds(result.headers);
                last_problem = "HTTP " + std::to_string(result.status) + ": " + body_excerpt(result.body);
            } else {
                throw Error(where + ": HTTP " + std::to_string(result.status) + ": " + body_excerpt(result.body) +
                            "; " + status_hint(result.status));
            }
            if (attempt + 1 < attempts) wait(attempt, server_wait);
        }
        throw Error(where + ": failed after " + std::to_string(attempts) +
                    (attempts == 1 ? " attempt" : " attempts") + "; last: " + last_problem);
    }

    /// Sleeps before retry `retry` (0-based).
    void wait(int retry, std::optional<double> server_wait) {
        const double seconds = backoff(retry, server_wait);
        if (sleep) {
            sleep(seconds);
        } else if (seconds > 0) {
            std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        }
    }

    static std::string curl_hint(CURLcode code) {
        switch (code) {
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
            return "check the host name in the base URL";
        case CURLE_URL_MALFORMAT:
        case CURLE_UNSUPPORTED_PROTOCOL:
            return "check the base URL (e.g. http://host:8080/v1)";
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
            return "TLS failed: check the scheme (http or https) and the server's certificate";
        default:
            return "check the base URL and the network";
        }
    }
};

HttpEmbedder::HttpEmbedder(HttpEmbedderOptions options, SleepFunction sleep) : impl_(std::make_unique<Impl>()) {
    while (!options.base_url.empty() && options.base_url.back() == '/') options.base_url.pop_back();
    if (options.base_url.empty()) {
        throw UsageError("no embedding server URL: pass the base URL of an OpenAI-compatible API, "
                         "e.g. http://host:8080/v1");
    }
    const std::string scheme = to_lower(options.base_url.substr(0, options.base_url.find("://") + 3));
    if (scheme != "http://" && scheme != "https://") {
        throw UsageError("embedding server URL '" + options.base_url +
                         "' must start with http:// or https:// (e.g. http://host:8080/v1)");
    }
    if (options.model.empty()) {
        throw UsageError("no embedding model: pass one (e.g. --embed-model) or set NOVELTY_EMBED_MODEL");
    }
    if (options.batch_size == 0) throw UsageError("embedding batch size must be at least 1");
    if (options.max_retries < 0 || options.max_retries > 1000) {
        throw UsageError("embedding retries must be between 0 and 1000");
    }
    if (!(options.timeout_seconds > 0) || !std::isfinite(options.timeout_seconds)) {
        throw UsageError("embedding timeout must be a positive number of seconds");
    }
    if (!(options.initial_backoff_seconds >= 0) || !(options.max_backoff_seconds >= 0) ||
        !std::isfinite(options.initial_backoff_seconds) || !std::isfinite(options.max_backoff_seconds)) {
        throw UsageError("embedding backoff times must be non-negative numbers of seconds");
    }

    Impl& impl = *impl_;
    impl.options = std::move(options);
    impl.sleep = std::move(sleep);
    impl.url = impl.options.base_url + "/embeddings";

    std::call_once(curl_global_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    impl.curl = curl_easy_init();
    if (impl.curl == nullptr) throw Error("could not initialise libcurl");

    auto add_header = [&](const std::string& header) {
        curl_slist* next = curl_slist_append(impl.headers, header.c_str());
        if (next == nullptr) throw Error("could not build HTTP headers (out of memory)");
        impl.headers = next;
    };
    add_header("Content-Type: application/json");
    add_header("Accept: application/json");
    add_header("Expect:");  // no "100-continue" round trip for large bodies
    if (!impl.options.api_key.empty()) add_header("Authorization: Bearer " + impl.options.api_key);

    const auto timeout_ms = std::max<long>(1, std::lround(impl.options.timeout_seconds * 1000.0));
    CURL* curl = impl.curl;
    curl_easy_setopt(curl, CURLOPT_URL, impl.url.c_str());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, impl.headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "novelty/" NOVELTY_VERSION);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(timeout_ms, 30000));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever compression curl supports
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, impl.curl_error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, write_header);
}

HttpEmbedder::~HttpEmbedder() = default;
HttpEmbedder::HttpEmbedder(HttpEmbedder&&) noexcept = default;
HttpEmbedder& HttpEmbedder::operator=(HttpEmbedder&&) noexcept = default;

std::string HttpEmbedder::name() const { return impl_->options.base_url + "#" + impl_->options.model; }

bool same_encoder(const std::string& recorded, const std::string& embedder_name) {
    if (recorded == embedder_name) return true;
    const bool recorded_url = recorded.rfind("http://", 0) == 0 || recorded.rfind("https://", 0) == 0;
    return !recorded_url && embedder_name.ends_with("#" + recorded);
}

std::size_t HttpEmbedder::dim() const { return impl_->dim; }

std::string HttpEmbedder::pooling() const { return ""; }

const HttpEmbedderOptions& HttpEmbedder::options() const { return impl_->options; }

std::size_t HttpEmbedder::requests_sent() const { return impl_->requests; }

std::vector<float> HttpEmbedder::embed(const std::vector<std::string>& texts) {
    std::vector<float> out;
    const std::size_t batch = impl_->options.batch_size;
    for (std::size_t first = 0; first < texts.size(); first += batch) {
        const std::size_t count = std::min(batch, texts.size() - first);
        std::vector<float> rows = impl_->embed_batch(texts, first, count);
        if (out.empty()) out.reserve(texts.size() * impl_->dim);
        out.insert(out.end(), rows.begin(), rows.end());
    }
    return out;
}

}  // namespace novelty::host
