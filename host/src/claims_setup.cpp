#include "novelty_host/claims_setup.hpp"

#include "novelty/error.hpp"

#include "json_parse.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace novelty::host {

namespace {

std::unique_ptr<ChatClient> make_client(const ClaimsLlmSettings& s, const std::string& url, const std::string& model) {
    ChatClientOptions o;
    o.base_url = url;
    o.model = model;
    o.api_key = s.llm_key;
    o.concurrency = s.concurrency;
    o.timeout_seconds = s.timeout_seconds;
    o.max_retries = s.retries;
    o.cache_path = s.response_cache;
    return std::make_unique<ChatClient>(chat_options_from_env(o, s.concurrency_given));
}

}  // namespace

struct ClaimStageSet::Impl {
    std::unique_ptr<ChatClient> llm_client, judge_client;
    std::unique_ptr<ClaimExtractor> extractor;
    std::unique_ptr<EntailmentGrader> grader;
    std::unique_ptr<VerdictJudge> rule_judge, llm_judge;
    VerdictJudge* chosen = nullptr;
    bool approximate = false;
};

ClaimStageSet::ClaimStageSet(const ClaimsLlmSettings& s) : impl_(std::make_unique<Impl>()) {
    Impl& i = *impl_;
    if (s.llm == "offline") {
        i.extractor = make_offline_extractor();
        i.grader = make_offline_grader();
    } else {
        i.llm_client = make_client(s, s.llm == "env" ? "" : s.llm, s.llm_model);
        i.extractor = make_llm_extractor(*i.llm_client);
        i.grader = make_llm_grader(*i.llm_client);
    }
    i.approximate = i.extractor->approximate() || i.grader->approximate();
    i.rule_judge = make_rule_judge(i.approximate ? offline_label : "rule");
    if (s.judge != "rule" && s.judge != "llm") {
        i.judge_client = make_client(s, s.judge, s.judge_model.empty() ? s.llm_model : s.judge_model);
        i.llm_judge = make_llm_judge(*i.judge_client);
    } else if (i.llm_client) {
        i.llm_judge = make_llm_judge(*i.llm_client);
    }
    if (s.judge == "rule") {
        i.chosen = i.rule_judge.get();
    } else {
        if (!i.llm_judge) throw UsageError("--judge llm needs --llm URL (or give the judge's own URL)");
        i.chosen = i.llm_judge.get();
    }
}

ClaimStageSet::~ClaimStageSet() = default;

ClaimExtractor& ClaimStageSet::extractor() { return *impl_->extractor; }
EntailmentGrader& ClaimStageSet::grader() { return *impl_->grader; }
VerdictJudge& ClaimStageSet::judge() { return *impl_->chosen; }
VerdictJudge& ClaimStageSet::rule_judge() { return *impl_->rule_judge; }
VerdictJudge* ClaimStageSet::llm_judge() { return impl_->llm_judge.get(); }
bool ClaimStageSet::approximate() const { return impl_->approximate; }

void ClaimStageSet::cancel() {
    if (impl_->llm_client) impl_->llm_client->cancel();
    if (impl_->judge_client) impl_->judge_client->cancel();
}

std::vector<const ChatClient*> ClaimStageSet::clients() const {
    std::vector<const ChatClient*> out;
    if (impl_->llm_client) out.push_back(impl_->llm_client.get());
    if (impl_->judge_client) out.push_back(impl_->judge_client.get());
    return out;
}

PreparedClaims prepare_claims(const Corpus& corpus, const std::vector<ClaimsProposalInput>& inputs,
                              const std::optional<PartialDate>& cutoff, const std::string& cutoff_text,
                              const std::vector<std::string>& global_exclude,
                              const std::optional<std::vector<std::size_t>>& pool_rows) {
    using nlohmann::ordered_json;
    PreparedClaims out;
    std::size_t max_limit = 0;
    for (const ClaimsProposalInput& r : inputs) {
        PipelineProposal p;
        p.id = r.id;
        p.text = {"", r.title, r.text};
        std::string limit_text;
        if (r.date) {
            p.row_limit = corpus.rows_through(*r.date);
            limit_text = r.date->text();
        } else if (cutoff) {
            p.row_limit = corpus.rows_through(*cutoff);
            limit_text = cutoff_text;
        } else {
            p.row_limit = corpus.size();
        }
        ordered_json excluded = ordered_json::array();
        std::vector<std::string> ids = global_exclude;
        ids.insert(ids.end(), r.exclude.begin(), r.exclude.end());
        if (corpus.find_row(r.id)) ids.push_back(r.id);
        for (const std::string& id : ids) {
            excluded.push_back(id);
            if (auto row = corpus.find_row(id)) p.excluded_rows.push_back(static_cast<std::int64_t>(*row));
        }
        max_limit = std::max(max_limit, p.row_limit);
        out.provenance.push_back(
            ordered_json{{"cutoff", limit_text.empty() ? ordered_json(nullptr) : ordered_json(limit_text)},
                         {"excluded", excluded}}
                .dump());
        out.proposals.push_back(std::move(p));
    }
    auto add = [&](std::size_t row) {
        const Paper paper = corpus.paper(row);
        out.pool.push_back({row, paper.id, paper.title, paper.abstract});
    };
    if (pool_rows) {
        std::vector<std::size_t> rows = *pool_rows;
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        for (std::size_t row : rows) add(row);
    } else {
        for (std::size_t row = 0; row < max_limit; ++row) add(row);
    }
    return out;
}

std::string claims_context_json(const ClaimsRunInfo& info, const std::string& provenance) {
    using nlohmann::ordered_json;
    ordered_json ctx;
    ctx["approximate"] = info.approximate;
    ctx["stages"] = {{"extractor", info.extractor}, {"grader", info.grader}, {"judge", info.judge}};
    ordered_json prov = {{"corpus", info.corpus_identity}, {"embedder", info.embedder}, {"pool_papers", info.pool_papers}};
    if (!provenance.empty()) {
        const ordered_json given = parse_ordered_json(provenance);
        for (const auto& [key, value] : given.items()) prov[key] = value;
    }
    ctx["provenance"] = prov;
    return ctx.dump();
}

}  // namespace novelty::host
