#include "novelty_host/claimnov/claims_setup.hpp"

#include "novelty/request/scope.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/llm/model_discovery.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

namespace novelty::host {

std::unique_ptr<ChatClient> make_chat_client(const ClaimsLlmSettings& s, const std::string& url, const std::string& model) {
    ChatClientOptions o;
    o.base_url = url;
    o.model = model;
    o.api_key = s.llm_key;
    o.concurrency = s.concurrency;
    o.timeout_seconds = s.timeout_seconds;
    o.max_retries = s.retries;
    o.max_tokens = s.max_tokens;
    o.cache_path = s.response_cache;
    return std::make_unique<ChatClient>(with_server_model(chat_options_from_env(o, s.concurrency_given)));
}

namespace {


/// A number in a flag value; throws UsageError naming the flag.
double number_in(const std::string& text, const std::string& what) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
        throw UsageError(what + ": '" + text + "' is not a finite number");
    return value;
}

/// Applies "--weights problem=0.4,result=0.3,..." to `weights` (indexed by ClaimDimension).
void parse_weights(const std::string& text, double (&weights)[n_claim_dimensions]) {
    std::set<std::string> seen;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        std::size_t end = text.find(',', begin);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(begin, end - begin);
        const auto eq = item.find('=');
        if (eq == std::string::npos)
            throw UsageError("--weights: '" + item + "' is not DIMENSION=WEIGHT (e.g. problem=0.4,result=0.3)");
        const std::string name = item.substr(0, eq);
        const auto dimension = parse_dimension(name);
        if (!dimension)
            throw UsageError("--weights: unknown dimension '" + name + "' (problem, methodology, resource, result)");
        if (!seen.insert(dimension_name(*dimension)).second)
            throw UsageError(std::string("--weights names ") + dimension_name(*dimension) + " twice");
        std::string number = item.substr(eq + 1);
        number.erase(0, number.find_first_not_of(" \t"));
        number.erase(number.find_last_not_of(" \t") + 1);
        const double w = number_in(number, std::string("--weights ") + dimension_name(*dimension));
        if (w < 0) throw UsageError(std::string("--weights ") + dimension_name(*dimension) + " is negative");
        weights[static_cast<std::size_t>(*dimension)] = w;
        begin = end + 1;
    }
    double total = 0;
    for (double w : weights) total += w;
    if (total <= 0) throw UsageError("--weights: every weight is 0; at least one dimension must count");
}

}  // namespace

ClaimNovParams claimnov_params(const ClaimsMethodSettings& method) {
    ClaimNovParams params;
    if (!(method.alpha > 0.0 && method.alpha <= 1.0))
        throw UsageError("--alpha " + std::to_string(method.alpha) + " is outside (0, 1]");
    params.alpha = method.alpha;
    if (!method.weights.empty()) parse_weights(method.weights, params.weights);
    if (!(method.threshold >= 0.0 && method.threshold <= 1.0))
        throw UsageError("--threshold " + std::to_string(method.threshold) + " is outside [0, 1]");
    params.rule_novelty_threshold = method.threshold;
    return params;
}

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
        i.llm_client = make_chat_client(s, s.llm == "env" ? "" : s.llm, s.llm_model);
        i.extractor = make_llm_extractor(*i.llm_client);
        i.grader = make_llm_grader(*i.llm_client);
    }
    i.approximate = i.extractor->approximate() || i.grader->approximate();
    i.rule_judge = make_rule_judge(i.approximate ? offline_label : "rule");
    if (s.judge != "rule" && s.judge != "llm" && s.judge != "auto") {
        i.judge_client = make_chat_client(s, s.judge, s.judge_model.empty() ? s.llm_model : s.judge_model);
        i.llm_judge = make_llm_judge(*i.judge_client, s.judge_view);
    } else if (i.llm_client) {
        i.llm_judge = make_llm_judge(*i.llm_client, s.judge_view);
    }
    if (s.judge == "rule" || (s.judge == "auto" && !i.llm_judge)) {
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

namespace {

/// Sorted, duplicate-free copy of rows.
std::vector<std::size_t> sorted_rows(std::vector<std::size_t> rows) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    return rows;
}

}  // namespace

namespace {

/// The rows of `pool` (every row below row_limit when null) that `filter` allows, ascending, once.
std::vector<std::size_t> filtered_pool(const std::vector<std::size_t>* pool, std::size_t row_limit, const RowFilter& filter) {
    std::vector<std::size_t> rows;
    if (pool) {
        for (std::size_t row : *pool)
            if (filter.allows(static_cast<std::int64_t>(row))) rows.push_back(row);
        return sorted_rows(std::move(rows));
    }
    for (std::size_t row = 0; row < std::min(row_limit, filter.n_rows); ++row)
        if (filter.allows(static_cast<std::int64_t>(row))) rows.push_back(row);
    return rows;
}

}  // namespace

PreparedClaims prepare_claims(const Corpus& corpus, const std::vector<ClaimsProposalInput>& inputs,
                              const std::optional<PartialDate>& cutoff, const std::string& cutoff_text,
                              const std::vector<std::string>& global_exclude,
                              const std::optional<std::vector<std::size_t>>& pool_rows,
                              const std::vector<std::shared_ptr<const RowFilter>>& filters) {
    using nlohmann::ordered_json;
    PreparedClaims out;
    std::shared_ptr<const std::vector<std::size_t>> global_pool;
    if (pool_rows) global_pool = std::make_shared<const std::vector<std::size_t>>(sorted_rows(*pool_rows));
    std::size_t max_limit = 0;          // of proposals that see the corpus prefix
    std::vector<std::size_t> own_rows;  // rows of proposals' own pools
    bool any_prefix = false, any_global = false;
    ScopeResolver scopes(corpus, cutoff, global_exclude);
    for (std::size_t n = 0; n < inputs.size(); ++n) {
        const ClaimsProposalInput& r = inputs[n];
        const RowFilter* filter = filters.empty() ? nullptr : filters[n].get();
        PipelineProposal p;
        p.id = r.id;
        p.text = {"", r.title, r.text};
        const RecordScope scope = scopes.resolve(r.id, r.date, r.exclude);
        p.row_limit = scope.row_limit;
        p.excluded_rows = scope.excluded_rows;
        // The run's cutoff is reported as given; a proposal's own date as parsed.
        const std::string limit_text = r.date || !cutoff ? scope.cutoff : cutoff_text;
        ordered_json excluded = ordered_json::array();
        for (const std::string& id : scope.excluded_ids) excluded.push_back(id);
        ordered_json provenance{{"cutoff", limit_text.empty() ? ordered_json(nullptr) : ordered_json(limit_text)},
                                {"excluded", excluded}};
        if (filter) {
            // A filter turns the proposal's pool into its own: the papers of its pool it allows.
            p.pool_rows = std::make_shared<const std::vector<std::size_t>>(
                filtered_pool(r.pool_rows ? &*r.pool_rows : (global_pool ? global_pool.get() : nullptr), p.row_limit, *filter));
            own_rows.insert(own_rows.end(), p.pool_rows->begin(), p.pool_rows->end());
            provenance["pool_papers"] = p.pool_rows->size();
            provenance["filtered"] = true;
        } else if (r.pool_rows) {
            p.pool_rows = std::make_shared<const std::vector<std::size_t>>(sorted_rows(*r.pool_rows));
            own_rows.insert(own_rows.end(), p.pool_rows->begin(), p.pool_rows->end());
            provenance["pool_papers"] = p.pool_rows->size();
        } else if (global_pool) {
            // The run pool may hold other proposals' own pools: this one sees --pool only.
            p.pool_rows = global_pool;
            any_global = true;
        } else {
            any_prefix = true;
            max_limit = std::max(max_limit, p.row_limit);
        }
        out.provenance.push_back(provenance.dump());
        out.proposals.push_back(std::move(p));
    }
    std::vector<std::size_t> rows;
    if (any_prefix)
        for (std::size_t row = 0; row < max_limit; ++row) rows.push_back(row);
    rows.insert(rows.end(), own_rows.begin(), own_rows.end());
    if (any_global) rows.insert(rows.end(), global_pool->begin(), global_pool->end());
    for (std::size_t row : sorted_rows(std::move(rows))) {
        const Paper paper = corpus.paper(row);
        out.pool.push_back({row, paper.id, paper.title, paper.abstract});
    }
    return out;
}

std::string claims_context_json(const ClaimsRunInfo& info, const std::string& provenance) {
    using nlohmann::ordered_json;
    ordered_json ctx;
    ctx["approximate"] = info.approximate;
    ctx["stages"] = {{"extractor", info.extractor}, {"grader", info.grader}, {"judge", info.judge}};
    if (info.llm_judge)
        ctx["stages"]["judge_view"] = {{"max_candidates", info.judge_view.max_candidates},
                                       {"max_abstract_chars", info.judge_view.max_abstract_chars}};
    ordered_json weights;
    for (std::size_t d = 0; d < n_claim_dimensions; ++d)
        weights[dimension_name(static_cast<ClaimDimension>(d))] = info.params.weights[d];
    ordered_json prov = {{"corpus", info.corpus_identity}, {"embedder", info.embedder}, {"pool_papers", info.pool_papers},
                         {"alpha", info.params.alpha}, {"weights", weights}};
    if (!provenance.empty()) {
        const ordered_json given = parse_ordered_json(provenance);
        for (const auto& [key, value] : given.items()) prov[key] = value;
    }
    ctx["provenance"] = prov;
    return ctx.dump();
}

}  // namespace novelty::host
