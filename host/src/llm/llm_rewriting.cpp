#include "novelty_host/llm/llm_rewriting.hpp"

#include <future>
#include <utility>

namespace novelty::host {

LlmRewriting::LlmRewriting(const ClaimsLlmSettings& settings, const std::string& url, const std::string& model,
                           const std::vector<RewriteMode>& modes) {
    client_ = make_chat_client(settings, url, model);
    for (const RewriteMode& mode : modes) {
        if (mode.tag == "expand") {
            n_expand_ = mode.n;
            expand_ = std::make_unique<LlmRewriter>(*client_, mode.append ? RewriteKind::continue_ : RewriteKind::expand);
        } else if (mode.tag == "hyde") {
            n_hyde_ = mode.n;
            hyde_ = std::make_unique<LlmRewriter>(*client_, RewriteKind::hyde);
        }
    }
}

LlmRewriting::~LlmRewriting() = default;

RewritesById LlmRewriting::rewrite(const std::vector<std::string>& ids, const std::vector<std::string>& texts,
                                   std::size_t begin, std::size_t end, const FailureFn& on_failure) {
    const std::vector<std::string> batch(texts.begin() + static_cast<std::ptrdiff_t>(begin),
                                         texts.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<std::future<RewriteResult>> expanded, hyde;
    if (expand_) expanded = expand_->submit_all(batch, n_expand_);
    if (hyde_) hyde = hyde_->submit_all(batch, n_hyde_);
    RewritesById out;
    const auto take = [&](std::future<RewriteResult>& f, const std::string& id, const char* mode,
                          std::vector<std::string>& list, std::string& error) {
        RewriteResult r = f.get();
        if (r.ok()) {
            list = std::move(r.texts);
            return;
        }
        error = r.error;
        ++failures_;
        if (on_failure) on_failure(id, mode, error);
    };
    for (std::size_t i = 0; i < batch.size(); ++i) {
        QueryRewrites& q = out[ids[begin + i]];
        if (expand_) take(expanded[i], ids[begin + i], "expansion", q.expand, q.expand_error);
        if (hyde_) take(hyde[i], ids[begin + i], "HyDE", q.hyde, q.hyde_error);
    }
    return out;
}

std::string LlmRewriting::name() const { return "llm:" + client_->options().model; }

std::string LlmRewriting::usage() const { return usage_report(*client_); }

}  // namespace novelty::host
