// An in-process fake OpenAI-compatible chat-completions server (cpp-httplib on 127.0.0.1) for
// tests and benchmarks: records requests, counts concurrent ones, and answers through an
// injectable behaviour (default: a canned answer per prompt kind, else {\"echo\": user message}) after an optional delay;
// GET /v1/models lists the models set with set_models().
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace novelty::test {

class FakeLlmServer {
public:
    using json = nlohmann::json;
    /// Fills the response for request number `call` (0-based); return false to use the default.
    using Behaviour = std::function<bool(const json& body, httplib::Response& res, int call)>;

    explicit FakeLlmServer(int threads = 128) {
        server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
        server_.set_keep_alive_max_count(100000);
        server_.set_tcp_nodelay(true);
        server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
            const int now = ++in_flight_;
            {
                int seen = max_in_flight_.load();
                while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
                }
            }
            json body = json::parse(req.body, nullptr, false);
            int call = 0;
            Behaviour behaviour;
            {
                std::lock_guard lock(mutex_);
                bodies_.push_back(body);
                authorization_.push_back(req.get_header_value("Authorization"));
                call = static_cast<int>(bodies_.size()) - 1;
                behaviour = behaviour_;
            }
            if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
            if (!behaviour || !behaviour(body, res, call)) answer(body, res);
            --in_flight_;
        });
        // GET /v1/models lists the models given to set_models(); 404 until then.
        server_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
            std::lock_guard lock(mutex_);
            if (!models_) {
                res.status = 404;
                res.set_content("{\"error\": \"not found\"}", "application/json");
                return;
            }
            json data = json::array();
            for (const std::string& id : *models_) data.push_back({{"id", id}, {"object", "model"}, {"owned_by", "me"}});
            res.set_content(json{{"object", "list"}, {"data", data}}.dump(), "application/json");
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        if (port_ <= 0) throw std::runtime_error("fake LLM server: could not bind 127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ~FakeLlmServer() {
        server_.stop();
        if (thread_.joinable()) thread_.join();
    }
    FakeLlmServer(const FakeLlmServer&) = delete;
    FakeLlmServer& operator=(const FakeLlmServer&) = delete;

    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    void set_behaviour(Behaviour b) {
        std::lock_guard lock(mutex_);
        behaviour_ = std::move(b);
    }
    void set_delay_ms(int ms) { delay_ms_ = ms; }
    /// The models GET /v1/models lists from now on.
    void set_models(std::vector<std::string> models) {
        std::lock_guard lock(mutex_);
        models_ = std::move(models);
    }
    int max_in_flight() const { return max_in_flight_; }
    std::vector<json> bodies() const {
        std::lock_guard lock(mutex_);
        return bodies_;
    }
    std::vector<std::string> authorization() const {
        std::lock_guard lock(mutex_);
        return authorization_;
    }
    std::size_t n_requests() const {
        std::lock_guard lock(mutex_);
        return bodies_.size();
    }

    /// Wraps `content` as a chat-completions answer.
    static std::string completion(const std::string& content, int prompt_tokens = 10, int completion_tokens = 5) {
        return json{{"id", "x"},
                    {"object", "chat.completion"},
                    {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}},
                    {"usage", {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}}}}
            .dump();
    }

    /// The question of a query-rewriting request ("Research question: Q" up to the blank line), or "".
    static std::string rewrite_question(const std::string& user) {
        const std::string mark = "Research question: ";
        if (user.rfind(mark, 0) != 0) return "";
        return user.substr(mark.size(), user.find("\n\n") == std::string::npos ? std::string::npos : user.find("\n\n") - mark.size());
    }
    /// The number of texts a rewriting request asks for ("Number of queries: N" / "abstracts"), 1 when none.
    static std::size_t rewrite_count(const std::string& user) {
        const auto at = user.find("Number of ");
        if (at == std::string::npos) return 1;
        const auto colon = user.find(": ", at);
        return colon == std::string::npos ? 1 : static_cast<std::size_t>(std::max(1, std::atoi(user.c_str() + colon + 2)));
    }

    /// The default answers: extraction -> one methodology claim per sentence of the description
    /// (at most 4), entailment -> level 5 when both claims are equal, else 2; verdict -> fail
    /// naming the strongest candidate when the profile holds a level 5, else pass; query
    /// expansion -> N questions made from the question, HyDE -> N abstracts naming it, a
    /// continuation -> one sentence naming it.
    static void answer(const json& body, httplib::Response& res) {
        const std::string system = body["messages"][0]["content"].get<std::string>();
        const std::string user = body["messages"][1]["content"].get<std::string>();
        std::string content;
        if (system.find("contribution claims") != std::string::npos) {
            const auto at = user.find("Description:\n");
            std::string text = at == std::string::npos ? user : user.substr(at + 13);
            json claims = json::array();
            std::size_t begin = 0;
            while (begin < text.size() && claims.size() < 4) {
                auto end = text.find('.', begin);
                if (end == std::string::npos) end = text.size();
                std::string s = text.substr(begin, end - begin);
                s.erase(0, s.find_first_not_of(' '));
                if (!s.empty()) claims.push_back({{"text", s}, {"dimension", "methodology"}, {"attribute", "a"}, {"value", "v"}});
                begin = end + 1;
            }
            if (claims.empty()) claims.push_back({{"text", "x"}, {"dimension", "problem"}, {"attribute", ""}, {"value", ""}});
            content = json{{"claims", claims}}.dump();
        } else if (system.find("already establishes") != std::string::npos) {
            const auto a = user.find("Claim under test (");
            const auto a_text = user.find("): ", a) + 3;
            const std::string claim = user.substr(a_text, user.find('\n', a_text) - a_text);
            const std::string prior = user.substr(user.find("Prior claim: ") + 13);
            content = json{{"level", claim == prior ? 5 : 2}, {"reason", "fake"}}.dump();
        } else if (system.find("novel enough") != std::string::npos) {
            const auto at = user.find('{');
            const json profile = json::parse(user.substr(at));
            std::string source;
            for (const auto& c : profile["claims"])
                for (const auto& cand : c["candidates"])
                    if (cand["level"] == 5 && source.empty()) source = cand["paper"];
            content = source.empty()
                          ? json{{"decision", "pass"}, {"source", nullptr}, {"established", json::array()}, {"rationale", "new"}}.dump()
                          : json{{"decision", "fail"}, {"source", source}, {"established", {0}}, {"rationale", "copied"}}.dump();
        } else if (const std::string question = rewrite_question(user); !question.empty() &&
                   system.find("augmented versions") != std::string::npos) {
            json rewrites = json::array();
            for (std::size_t i = 0; i < rewrite_count(user); ++i)
                rewrites.push_back(i % 2 == 0 ? question + " methods and datasets" : "prior work on " + question);
            content = json{{"rewrites", rewrites}}.dump();
        } else if (!question.empty() && system.find("hypothetical abstracts") != std::string::npos) {
            json abstracts = json::array();
            for (std::size_t i = 0; i < rewrite_count(user); ++i)
                abstracts.push_back("We study " + question + " from angle " + std::to_string(i + 1) + ".");
            content = json{{"abstracts", abstracts}}.dump();
        } else if (!question.empty() && system.find("continue it with a short passage") != std::string::npos) {
            content = json{{"continuation", "Related methods, tasks and evaluations of " + question + "."}}.dump();
        } else {
            content = json{{"echo", user}}.dump();
        }
        res.set_content(completion(content), "application/json");
    }

private:
    httplib::Server server_;
    std::thread thread_;
    int port_ = 0;
    mutable std::mutex mutex_;
    Behaviour behaviour_;
    std::optional<std::vector<std::string>> models_;
    std::vector<json> bodies_;
    std::vector<std::string> authorization_;
    std::atomic<int> in_flight_{0};
    std::atomic<int> max_in_flight_{0};
    std::atomic<int> delay_ms_{0};
};

}  // namespace novelty::test
