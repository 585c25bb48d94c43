#include "novelty_host/llm/chat_client.hpp"

#include "llm/http_util.hpp"
#include "llm/response_cache.hpp"

#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"

#include <curl/curl.h>
#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>

namespace novelty::host {

namespace {

using detail::format_seconds;
using detail::lookup_env;

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

/// The longest the worker sleeps without looking at its queue.
constexpr int max_poll_ms = 100;

std::once_flag curl_global_once;

/// A queued or running call.
struct Job {
    ChatRequest request;
    ChatClient::Callback done;
    std::string key;
    std::string body;
    int attempts = 0;
    Clock::time_point ready_at;
    long last_status = 0;
};

/// One HTTP attempt in flight.
struct Transfer {
    std::unique_ptr<Job> job;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    std::string response;
    std::map<std::string, std::string> response_headers;
    char error[CURL_ERROR_SIZE] = {};
};

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
    static_cast<Transfer*>(user)->response.append(data, size * count);
    return size * count;
}

std::size_t write_header(char* data, std::size_t size, std::size_t count, void* user) {
    detail::add_header_line(std::string(data, size * count), static_cast<Transfer*>(user)->response_headers);
    return size * count;
}

}  // namespace

ChatClientOptions chat_options_from_env(ChatClientOptions flags, bool concurrency_given, const EnvironmentLookup& lookup) {
    if (flags.base_url.empty()) flags.base_url = lookup_env(lookup, "NOVELTY_LLM_BASE_URL");
    if (flags.api_key.empty()) {
        flags.api_key = lookup_env(lookup, "NOVELTY_LLM_API_KEY");
        if (flags.api_key.empty()) flags.api_key = lookup_env(lookup, "OPENAI_API_KEY");
    }
    if (flags.model.empty()) flags.model = lookup_env(lookup, "NOVELTY_LLM_MODEL");
    if (!concurrency_given) {
        const std::string text = lookup_env(lookup, "NOVELTY_LLM_CONCURRENCY");
        if (!text.empty()) {
            char* end = nullptr;
            const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
            if (end != text.c_str() + text.size() || text[0] == '-')
                throw UsageError("NOVELTY_LLM_CONCURRENCY='" + text + "' is not a whole number");
            flags.concurrency = static_cast<std::size_t>(value);
        }
    }
    return flags;
}

struct ChatClient::Impl {
    ChatClientOptions options;
    std::string url;
    std::unique_ptr<detail::ResponseCache> cache;
    CURLM* multi = nullptr;
    std::thread worker;

    mutable std::mutex mutex;
    std::condition_variable idle_cv;
    std::deque<std::unique_ptr<Job>> queue;  // guarded by mutex
    std::size_t outstanding = 0;             // queued + running, guarded by mutex
    bool stopping = false;                   // guarded by mutex
    bool cancelled = false;                  // guarded by mutex
    std::map<std::string, StageUsage> usage;  // guarded by mutex

    // Worker-thread state.
    std::unordered_map<CURL*, std::unique_ptr<Transfer>> running;
    std::minstd_rand rng{std::random_device{}()};

    ~Impl() {
        if (multi != nullptr) curl_multi_cleanup(multi);
    }

    void count(const std::string& stage, const std::function<void(StageUsage&)>& add) {
        std::lock_guard lock(mutex);
        add(usage[stage]);
    }

    /// Delivers a final result: accounting, the cache, the callback, the idle count.
    void finish(std::unique_ptr<Job> job, ChatResult result) {
        if (result.ok && cache && job->request.use_cache &&
            (!job->request.cacheable || job->request.cacheable(result.content)))
            cache->put(job->key, job->request.model, job->request.stage,
                       {result.content, result.prompt_tokens, result.completion_tokens});
        count(job->request.stage, [&](StageUsage& u) {
            if (!result.ok) ++u.failures;
            u.prompt_tokens += result.prompt_tokens;
            u.completion_tokens += result.completion_tokens;
        });
        if (job->done) job->done(std::move(result));
        {
            std::lock_guard lock(mutex);
            --outstanding;
        }
        idle_cv.notify_all();
    }

    void finish_cancelled(std::unique_ptr<Job> job) {
        ChatResult r;
        r.cancelled = true;
        r.attempts = job->attempts;
        r.error = "POST " + url + ": cancelled";
        finish(std::move(job), std::move(r));
    }

    double backoff(int retry, std::optional<double> server_wait) {
        return detail::retry_backoff(retry, server_wait, options.initial_backoff_seconds, options.max_backoff_seconds, rng);
    }

    void start(std::unique_ptr<Job> job) {
        auto t = std::make_unique<Transfer>();
        t->easy = curl_easy_init();
        if (t->easy == nullptr) {
            ChatResult r;
            r.error = "could not initialise libcurl";
            finish(std::move(job), std::move(r));
            return;
        }
        ++job->attempts;
        count(job->request.stage, [](StageUsage& u) { ++u.http_attempts; });
        t->headers = curl_slist_append(t->headers, "Content-Type: application/json");
        t->headers = curl_slist_append(t->headers, "Accept: application/json");
        t->headers = curl_slist_append(t->headers, "Expect:");
        if (!options.api_key.empty())
            t->headers = curl_slist_append(t->headers, ("Authorization: Bearer " + options.api_key).c_str());
        const auto timeout_ms = std::max<long>(1, std::lround(options.timeout_seconds * 1000.0));
        CURL* e = t->easy;
        curl_easy_setopt(e, CURLOPT_URL, url.c_str());
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, job->body.data());
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(job->body.size()));
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
        curl_easy_setopt(e, CURLOPT_USERAGENT, "novelty/" NOVELTY_VERSION);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(timeout_ms, 30000));
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, write_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
        t->job = std::move(job);
        curl_multi_add_handle(multi, e);
        running.emplace(e, std::move(t));
    }

    static void release(Transfer& t, CURLM* multi) {
        curl_multi_remove_handle(multi, t.easy);
        curl_easy_cleanup(t.easy);
        curl_slist_free_all(t.headers);
    }

    /// Either schedules another attempt or finishes the job with `problem`.
    void retry_or_fail(std::unique_ptr<Job> job, const std::string& problem, std::optional<double> server_wait) {
        if (job->attempts <= options.max_retries) {
            const double wait = backoff(job->attempts - 1, server_wait);
            job->ready_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
            std::lock_guard lock(mutex);
            queue.push_back(std::move(job));
            return;
        }
        ChatResult r;
        r.attempts = job->attempts;
        r.http_status = job->last_status;
        r.error = "POST " + url + ": failed after " + std::to_string(job->attempts) +
                  (job->attempts == 1 ? " attempt" : " attempts") + "; last: " + problem;
        finish(std::move(job), std::move(r));
    }

    void complete(Transfer& t, CURLcode code) {
        std::unique_ptr<Job> job = std::move(t.job);
        long status = 0;
        if (code == CURLE_OK) curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
        job->last_status = status;
        const std::string where = "POST " + url;
        if (code != CURLE_OK) {
            const std::string message = t.error[0] != '\0' ? std::string(t.error) : curl_easy_strerror(code);
            if (!detail::retryable_curl_error(code)) {
                ChatResult r;
                r.attempts = job->attempts;
                r.error = where + ": " + message + "; check the base URL (e.g. http://host:8000/v1) and the network";
                finish(std::move(job), std::move(r));
                return;
            }
            retry_or_fail(std::move(job),
                          code == CURLE_OPERATION_TIMEDOUT
                              ? "timed out after " + format_seconds(options.timeout_seconds) + " (" + message + ")"
                              : message,
                          std::nullopt);
            return;
        }
        if (status >= 200 && status < 300) {
            json answer;
            try {
                answer = parse_json(t.response);
            } catch (const JsonError&) {
                retry_or_fail(std::move(job),
                              "HTTP " + std::to_string(status) + " but the body is not valid JSON; body starts: " +
                                  detail::body_excerpt(t.response),
                              std::nullopt);
                return;
            }
            ChatResult r;
            r.attempts = job->attempts;
            r.http_status = status;
            const json* content = nullptr;
            if (answer.is_object() && answer.contains("choices") && answer["choices"].is_array() &&
                !answer["choices"].empty() && answer["choices"][0].is_object()) {
                const json& choice = answer["choices"][0];
                if (choice.contains("message") && choice["message"].is_object() && choice["message"].contains("content") &&
                    choice["message"]["content"].is_string())
                    content = &choice["message"]["content"];
            }
            if (content == nullptr) {
                r.error = where + ": HTTP " + std::to_string(status) +
                          " but the answer has no choices[0].message.content string (is this an OpenAI-compatible "
                          "chat-completions endpoint?); body starts: " + detail::body_excerpt(t.response);
                finish(std::move(job), std::move(r));
                return;
            }
            r.ok = true;
            r.content = content->get<std::string>();
            if (answer.contains("usage") && answer["usage"].is_object()) {
                const json& usage_json = answer["usage"];
                if (usage_json.contains("prompt_tokens") && usage_json["prompt_tokens"].is_number_unsigned())
                    r.prompt_tokens = usage_json["prompt_tokens"].get<std::uint64_t>();
                if (usage_json.contains("completion_tokens") && usage_json["completion_tokens"].is_number_unsigned())
                    r.completion_tokens = usage_json["completion_tokens"].get<std::uint64_t>();
            }
            finish(std::move(job), std::move(r));
            return;
        }
        const std::string problem = "HTTP " + std::to_string(status) + ": " + detail::body_excerpt(t.response);
        if (detail::retryable_status(status)) {
            retry_or_fail(std::move(job), problem, detail::retry_after_seconds(t.response_headers));
            return;
        }
        ChatResult r;
        r.attempts = job->attempts;
        r.http_status = status;
        r.error = where + ": " + problem +
                  (status == 401 || status == 403 ? "; check the API key (--llm-key, NOVELTY_LLM_API_KEY or OPENAI_API_KEY)"
                   : status == 404 ? "; check the base URL (it usually ends in /v1) and the model name"
                                   : "");
        finish(std::move(job), std::move(r));
    }

    void cancel_everything() {
        for (auto& [easy, t] : running) {
            release(*t, multi);
            finish_cancelled(std::move(t->job));
        }
        running.clear();
        std::deque<std::unique_ptr<Job>> waiting;
        {
            std::lock_guard lock(mutex);
            waiting.swap(queue);
        }
        for (auto& job : waiting) finish_cancelled(std::move(job));
    }

    void run() {
        while (true) {
            bool cancelling = false;
            {
                std::lock_guard lock(mutex);
                cancelling = cancelled && (!queue.empty() || !running.empty());
            }
            if (cancelling) cancel_everything();
            const auto now = Clock::now();
            std::optional<Clock::time_point> next_ready;
            std::vector<std::unique_ptr<Job>> to_start;
            {
                std::lock_guard lock(mutex);
                if (stopping && queue.empty() && running.empty()) break;
                for (auto it = queue.begin(); it != queue.end();) {
                    if ((*it)->ready_at <= now && running.size() + to_start.size() < options.concurrency) {
                        to_start.push_back(std::move(*it));
                        it = queue.erase(it);
                    } else {
                        if ((*it)->ready_at > now && (!next_ready || (*it)->ready_at < *next_ready)) next_ready = (*it)->ready_at;
                        ++it;
                    }
                }
            }
            for (auto& job : to_start) start(std::move(job));
            int still_running = 0;
            curl_multi_perform(multi, &still_running);
            int left = 0;
            while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
                if (msg->msg != CURLMSG_DONE) continue;
                auto it = running.find(msg->easy_handle);
                if (it == running.end()) continue;
                std::unique_ptr<Transfer> t = std::move(it->second);
                running.erase(it);
                const CURLcode code = msg->data.result;
                complete(*t, code);
                release(*t, multi);
            }
            int timeout_ms = max_poll_ms;
            if (next_ready) {
                const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(*next_ready - Clock::now()).count();
                timeout_ms = static_cast<int>(std::clamp<long long>(until, 0, max_poll_ms));
            }
            bool queue_ready = false;
            {
                std::lock_guard lock(mutex);
                for (const auto& job : queue)
                    if (job->ready_at <= Clock::now() && running.size() < options.concurrency) queue_ready = true;
            }
            if (!queue_ready) curl_multi_poll(multi, nullptr, 0, timeout_ms, nullptr);
        }
    }

    void wake() { curl_multi_wakeup(multi); }
};

ChatClient::ChatClient(ChatClientOptions options) : impl_(std::make_unique<Impl>()) {
    while (!options.base_url.empty() && options.base_url.back() == '/') options.base_url.pop_back();
    if (options.base_url.empty())
        throw UsageError("no LLM server URL: pass the base URL of an OpenAI-compatible API (e.g. http://host:8000/v1) "
                         "or set NOVELTY_LLM_BASE_URL");
    const std::string scheme = detail::to_lower(options.base_url.substr(0, options.base_url.find("://") + 3));
    if (scheme != "http://" && scheme != "https://")
        throw UsageError("LLM server URL '" + options.base_url + "' must start with http:// or https://");
    if (options.model.empty()) throw UsageError("no LLM model: pass one (e.g. --llm-model) or set NOVELTY_LLM_MODEL");
    if (options.concurrency < 1 || options.concurrency > 1024) throw UsageError("LLM concurrency must be between 1 and 1024");
    if (options.max_retries < 0 || options.max_retries > 1000) throw UsageError("LLM retries must be between 0 and 1000");
    if (!(options.timeout_seconds > 0) || !std::isfinite(options.timeout_seconds))
        throw UsageError("the LLM timeout must be a positive number of seconds");
    if (!(options.initial_backoff_seconds >= 0) || !(options.max_backoff_seconds >= 0))
        throw UsageError("LLM backoff times must be non-negative numbers of seconds");

    Impl& impl = *impl_;
    impl.options = std::move(options);
    impl.url = impl.options.base_url + "/chat/completions";
    if (!impl.options.cache_path.empty()) impl.cache = std::make_unique<detail::ResponseCache>(impl.options.cache_path);
    std::call_once(curl_global_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    impl.multi = curl_multi_init();
    if (impl.multi == nullptr) throw Error("could not initialise libcurl");
    curl_multi_setopt(impl.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(impl.options.concurrency));
    impl.worker = std::thread([&impl] { impl.run(); });
}

ChatClient::~ChatClient() {
    cancel();
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->wake();
    if (impl_->worker.joinable()) impl_->worker.join();
}

std::string ChatClient::cache_key(const ChatRequest& request) const {
    json messages = json::array();
    for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    const json key = {{"model", request.model.empty() ? impl_->options.model : request.model},
                      {"messages", messages},
                      {"temperature", request.temperature},
                      {"max_tokens", request.max_tokens},
                      {"json_object", request.json_object}};
    return sha256_hex(key.dump(-1, ' ', false, json::error_handler_t::replace));
}

void ChatClient::submit(ChatRequest request, Callback done) {
    Impl& impl = *impl_;
    if (request.model.empty()) request.model = impl.options.model;
    if (request.max_tokens == 0) request.max_tokens = impl.options.max_tokens;
    auto job = std::make_unique<Job>();
    job->key = cache_key(request);
    job->done = std::move(done);
    bool cancelled = false;
    {
        std::lock_guard lock(impl.mutex);
        ++impl.usage[request.stage].calls;
        ++impl.outstanding;
        cancelled = impl.cancelled;
    }
    job->request = std::move(request);
    if (cancelled) {
        impl.finish_cancelled(std::move(job));
        return;
    }
    if (impl.cache && job->request.use_cache) {
        auto hit = impl.cache->get(job->key);
        if (hit && job->request.cacheable && !job->request.cacheable(hit->content)) hit.reset();
        if (hit) {
            ChatResult r;
            r.ok = true;
            r.from_cache = true;
            r.content = std::move(hit->content);
            r.prompt_tokens = hit->prompt_tokens;
            r.completion_tokens = hit->completion_tokens;
            impl.count(job->request.stage, [](StageUsage& u) { ++u.cache_hits; });
            job->request.use_cache = false;  // nothing to store again
            impl.finish(std::move(job), std::move(r));
            return;
        }
    }
    json messages = json::array();
    for (const auto& m : job->request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", job->request.model}, {"messages", messages}, {"temperature", job->request.temperature}};
    if (job->request.max_tokens > 0) body["max_tokens"] = job->request.max_tokens;
    if (job->request.json_object) body["response_format"] = {{"type", "json_object"}};
    job->body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    job->ready_at = Clock::now();
    {
        std::lock_guard lock(impl.mutex);
        impl.queue.push_back(std::move(job));
    }
    impl.wake();
}

std::future<ChatResult> ChatClient::submit(ChatRequest request) {
    auto promise = std::make_shared<std::promise<ChatResult>>();
    std::future<ChatResult> future = promise->get_future();
    submit(std::move(request), [promise](ChatResult result) { promise->set_value(std::move(result)); });
    return future;
}

std::vector<ChatResult> ChatClient::run_all(std::vector<ChatRequest> requests) {
    std::vector<std::future<ChatResult>> futures;
    futures.reserve(requests.size());
    for (auto& r : requests) futures.push_back(submit(std::move(r)));
    std::vector<ChatResult> results;
    results.reserve(futures.size());
    for (auto& f : futures) results.push_back(f.get());
    return results;
}

void ChatClient::cancel() {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->cancelled = true;
    }
    impl_->wake();
}

void ChatClient::wait_idle() {
    std::unique_lock lock(impl_->mutex);
    impl_->idle_cv.wait(lock, [this] { return impl_->outstanding == 0; });
}

void ChatClient::note_invalid_answer(const std::string& stage, bool repaired) {
    impl_->count(stage, [repaired](StageUsage& u) {
        ++u.invalid_answers;
        ++(repaired ? u.repaired : u.unrepaired);
    });
}

std::map<std::string, StageUsage> ChatClient::usage() const {
    std::lock_guard lock(impl_->mutex);
    std::map<std::string, StageUsage> out = impl_->usage;
    StageUsage total;
    for (const auto& [stage, u] : impl_->usage) {
        total.calls += u.calls;
        total.http_attempts += u.http_attempts;
        total.cache_hits += u.cache_hits;
        total.failures += u.failures;
        total.prompt_tokens += u.prompt_tokens;
        total.completion_tokens += u.completion_tokens;
        total.invalid_answers += u.invalid_answers;
        total.repaired += u.repaired;
        total.unrepaired += u.unrepaired;
    }
    out["total"] = total;
    return out;
}

const ChatClientOptions& ChatClient::options() const { return impl_->options; }

std::string usage_report(const ChatClient& client) {
    std::string text;
    char line[512];
    for (const auto& [stage, u] : client.usage()) {
        std::snprintf(line, sizeof line, "novelty: llm %s %s: %llu calls, %llu cached, %llu failed, %llu+%llu tokens\n",
                      client.options().model.c_str(), stage.c_str(), static_cast<unsigned long long>(u.calls),
                      static_cast<unsigned long long>(u.cache_hits), static_cast<unsigned long long>(u.failures),
                      static_cast<unsigned long long>(u.prompt_tokens),
                      static_cast<unsigned long long>(u.completion_tokens));
        std::string tail = line;
        tail.pop_back();  // the newline
        const std::uint64_t sent = u.calls - std::min(u.calls, u.cache_hits);
        if (u.http_attempts > sent) tail += ", " + std::to_string(u.http_attempts - sent) + " retries";
        if (u.invalid_answers > 0)
            tail += ", " + std::to_string(u.invalid_answers) + " invalid answers (" + std::to_string(u.repaired) +
                    " repaired, " + std::to_string(u.unrepaired) + " not)";
        text += tail + "\n";
    }
    return text;
}

}  // namespace novelty::host
