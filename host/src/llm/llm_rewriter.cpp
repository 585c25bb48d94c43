#include "novelty_host/llm/llm_rewriter.hpp"

#include "novelty/util/error.hpp"
#include "novelty_host/claimnov/claim_stages.hpp"
#include "novelty_host/llm/prompts.hpp"

#include "llm/http_util.hpp"
#include "llm/json_answer.hpp"

#include <memory>

namespace novelty::host {

namespace {

const char* answer_key(RewriteKind kind) {
    switch (kind) {
    case RewriteKind::expand: return "rewrites";
    case RewriteKind::hyde: return "abstracts";
    case RewriteKind::continue_: return "continuation";
    }
    return "";
}

const char* prompt_name(RewriteKind kind) {
    switch (kind) {
    case RewriteKind::expand: return "expand_query";
    case RewriteKind::hyde: return "hyde_abstracts";
    case RewriteKind::continue_: return "expand_continuation";
    }
    return "";
}

}  // namespace

const char* rewrite_kind_name(RewriteKind kind) {
    switch (kind) {
    case RewriteKind::expand: return "expand";
    case RewriteKind::hyde: return "hyde";
    case RewriteKind::continue_: return "expand-single";
    }
    return "";
}

std::optional<std::string> parse_rewrite_answer(const std::string& content, RewriteKind kind, std::size_t n,
                                                std::vector<std::string>& out) {
    out.clear();
    nlohmann::json answer;
    if (auto problem = detail::parse_answer_object(content, answer)) return problem;
    const std::string key = answer_key(kind);
    const auto it = answer.find(key);
    if (it == answer.end()) return "the object has no \"" + key + "\"";
    if (kind == RewriteKind::continue_) {
        if (!it->is_string()) return "\"" + key + "\" is not a string";
        std::string text = detail::trim(it->get<std::string>());
        if (text.empty()) return "\"" + key + "\" is empty";
        if (!detail::has_word(text)) return "\"" + key + "\" is '" + text + "', a placeholder, not a text";
        if (n > 0) out.push_back(std::move(text));
        return std::nullopt;
    }
    if (!it->is_array()) return "\"" + key + "\" is not an array of strings";
    if (it->empty()) return "\"" + key + "\" is empty";
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const auto& value = (*it)[i];
        if (!value.is_string()) return "\"" + key + "\"[" + std::to_string(i) + "] is not a string";
        std::string text = detail::trim(value.get<std::string>());
        if (text.empty()) return "\"" + key + "\"[" + std::to_string(i) + "] is empty";
        if (!detail::has_word(text))
            return "\"" + key + "\"[" + std::to_string(i) + "] is '" + text + "', a placeholder, not a text";
        if (texts.size() < n) texts.push_back(std::move(text));
    }
    out = std::move(texts);
    return std::nullopt;
}

std::string rewrite_prompt(RewriteKind kind, const std::string& query, std::size_t n) {
    const std::string question = "Research question: " + query;
    switch (kind) {
    case RewriteKind::expand: return question + "\n\nNumber of queries: " + std::to_string(n);
    case RewriteKind::hyde: return question + "\n\nNumber of abstracts: " + std::to_string(n);
    case RewriteKind::continue_: return question;
    }
    return question;
}

LlmRewriter::LlmRewriter(ChatClient& client, RewriteKind kind) : client_(client), kind_(kind) {}

std::string LlmRewriter::name() const { return rewrite_kind_name(kind_); }

const std::string& LlmRewriter::model() const { return client_.options().model; }

std::vector<std::string> LlmRewriter::rewrite(const std::string& query, std::size_t n) {
    RewriteResult result = std::move(rewrite_all({query}, n).front());
    if (!result.ok()) throw Error("query rewriting (" + name() + ") failed: " + result.error);
    return result.texts;
}

std::vector<std::future<RewriteResult>> LlmRewriter::submit_all(const std::vector<std::string>& queries, std::size_t n) {
    std::vector<std::future<RewriteResult>> futures;
    futures.reserve(queries.size());
    const std::string system(prompt_text(prompt_name(kind_)));
    for (const std::string& query : queries) {
        auto promise = std::make_shared<std::promise<RewriteResult>>();
        futures.push_back(promise->get_future());
        if (n == 0) {
            promise->set_value({});
            continue;
        }
        ChatRequest request;
        request.messages = {{"system", system}, {"user", rewrite_prompt(kind_, query, n)}};
        request.temperature = 0.0;
        request.stage = name();
        auto texts = std::make_shared<std::vector<std::string>>();
        const RewriteKind kind = kind_;
        ask_json(
            client_, std::move(request),
            [texts, kind, n](const std::string& content) { return parse_rewrite_answer(content, kind, n, *texts); },
            [texts, promise](std::optional<std::string> content, std::string error) {
                RewriteResult result;
                if (content) result.texts = *texts;
                else result.error = error.empty() ? std::string("no answer") : std::move(error);
                promise->set_value(std::move(result));
            });
    }
    return futures;
}

std::vector<RewriteResult> LlmRewriter::rewrite_all(const std::vector<std::string>& queries, std::size_t n) {
    auto futures = submit_all(queries, n);
    std::vector<RewriteResult> results;
    results.reserve(futures.size());
    for (auto& f : futures) results.push_back(f.get());
    return results;
}

}  // namespace novelty::host
