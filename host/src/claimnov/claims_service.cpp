#include "novelty_host/claimnov/claims_service.hpp"

#include "server/server_requests.hpp"

#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/llm/http_embedder.hpp"
#include "novelty_host/claimnov/claimnov_pipeline.hpp"
#include "novelty_host/claimnov/pool_claim_store.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <mutex>

namespace novelty::host {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void bad(const std::string& where, const std::string& problem) { throw UsageError(where + ": " + problem, where); }

/// Refuses a cache file inside the corpus directory, which the server only reads.
void check_outside(const std::string& path, const std::string& corpus_dir, const std::string& flag) {
    if (path.empty() || path == ":memory:") return;
    std::error_code ec;
    const fs::path corpus = fs::weakly_canonical(fs::path(corpus_dir), ec);
    const fs::path file = fs::weakly_canonical(fs::path(path), ec);
    const std::string c = corpus.string(), f = file.string();
    if (f.size() > c.size() && f.compare(0, c.size(), c) == 0 && f[c.size()] == '/')
        throw UsageError(flag + " " + path + ": the server opens the corpus read-only; put the cache outside " +
                         corpus_dir);
}

/// An optional array of paper ids (strings or integers) under `key`; errors name `where`
/// (default: the key).
std::vector<std::string> id_list(const nlohmann::json& body, const std::string& key, std::string where = "") {
    if (where.empty()) where = key;
    std::vector<std::string> ids;
    auto v = body.find(key);
    if (v == body.end() || v->is_null()) return ids;
    if (!v->is_array()) bad(where, "must be an array of paper ids");
    for (std::size_t i = 0; i < v->size(); ++i) {
        const auto& e = (*v)[i];
        if (e.is_string() && !e.get<std::string>().empty()) ids.push_back(e.get<std::string>());
        else if (e.is_number_integer()) ids.push_back(e.dump());
        else bad(where + "[" + std::to_string(i) + "]", "must be a paper id (a non-empty string or an integer)");
    }
    return ids;
}

/// One parsed request.
struct ClaimsRequest {
    std::vector<ClaimsProposalInput> proposals;
    std::optional<PartialDate> cutoff;
    std::string cutoff_text;
    std::vector<std::string> exclude;
    std::optional<std::vector<std::size_t>> pool_rows;
    VerdictJudge* judge = nullptr;
};

}  // namespace

struct ClaimsService::Impl {
    ClaimsServiceOptions options;
    ClaimNovParams params;
    std::unique_ptr<Embedder> embedder;
    Corpus corpus;
    std::mutex corpus_mutex;  // corpus lookups, from request threads and the job
    std::unique_ptr<PoolClaimStore> store;
    std::unique_ptr<ClaimStageSet> stages;
    std::mutex run_mutex;     // one job at a time

    Impl(ClaimsServiceOptions o, std::unique_ptr<Embedder> e)
        : options(std::move(o)), embedder(std::move(e)), corpus(Corpus::open(options.corpus_dir)) {}

    ClaimsRequest parse(const std::string& text) {
        const nlohmann::json body = parse_body(text);
        refuse_unknown_keys(body, {"proposals", "cutoff", "exclude", "pool", "judge"});
        ClaimsRequest request;
        RequestLimits limits;
        limits.max_records = options.max_proposals;
        limits.max_text_bytes = options.max_text_bytes;
        const std::vector<QueryRecord> records = parse_records(body, "proposals", limits, corpus.manifest().dim).records;
        for (std::size_t i = 0; i < records.size(); ++i) {
            const QueryRecord& r = records[i];
            if (!r.has_text())
                bad("proposals[" + std::to_string(i) + "]",
                    "has no \"title\" or \"text\": claims are extracted from the proposal's text");
            request.proposals.push_back({r.id, r.title, r.text, r.date, r.exclude, std::nullopt});
            const nlohmann::json& record = body["proposals"][i];
            if (auto pool = record.find("pool"); pool != record.end() && !pool->is_null())
                request.proposals.back().pool_rows = pool_rows(record, "pool", "proposals[" + std::to_string(i) + "].pool");
        }
        request.cutoff = parse_date_field(body, "cutoff");
        if (request.cutoff) request.cutoff_text = body["cutoff"].get<std::string>();
        request.exclude = id_list(body, "exclude");
        if (auto pool = body.find("pool"); pool != body.end() && !pool->is_null())
            request.pool_rows = pool_rows(body, "pool", "pool");
        request.judge = &stages->judge();
        if (auto judge = body.find("judge"); judge != body.end() && !judge->is_null()) {
            const std::string name = judge->is_string() ? judge->get<std::string>() : std::string();
            if (name == "rule") {
                request.judge = &stages->rule_judge();
            } else if (name == "llm") {
                request.judge = stages->llm_judge();
                if (request.judge == nullptr)
                    bad("judge", "'llm' needs a server started with --llm URL or --judge URL; this one is offline "
                                 "(send \"rule\" or leave it out)");
            } else {
                bad("judge", "must be \"llm\" or \"rule\", found " + judge->dump());
            }
        }
        return request;
    }

    /// The corpus rows of the paper ids under `key` of `object`; `where` names the field in errors.
    std::vector<std::size_t> pool_rows(const nlohmann::json& object, const std::string& key, const std::string& where) {
        const std::vector<std::string> ids = id_list(object, key, where);
        if (ids.empty()) bad(where, "is empty: name at least one paper, or leave it out to use the whole corpus");
        std::vector<std::size_t> rows;
        std::lock_guard lock(corpus_mutex);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const auto row = corpus.find_row(ids[i]);
            if (!row) bad(where + "[" + std::to_string(i) + "]", "paper '" + ids[i] + "' is not in the corpus");
            rows.push_back(*row);
        }
        return rows;
    }

    std::string run(const ClaimsRequest& request, const JobProgressFn& progress) {
        std::lock_guard run_lock(run_mutex);
        PreparedClaims prepared;
        std::string identity;
        {
            std::lock_guard lock(corpus_mutex);
            prepared = prepare_claims(corpus, request.proposals, request.cutoff, request.cutoff_text, request.exclude,
                                      request.pool_rows);
            identity = corpus.identity();
        }
        PipelineOptions pipeline_options;
        pipeline_options.window = options.window;
        pipeline_options.params = params;
        // No cancel hook: cancelling a client would cancel it for every later job too.
        ClaimNovPipeline pipeline(stages->extractor(), stages->grader(), *request.judge, *embedder, pipeline_options);
        const std::size_t pool_size = prepared.pool.size();
        if (progress) progress("pool claims", 0, pool_size);
        const PoolStats stats = pipeline.prepare_pool(std::move(prepared.pool), *store, [&](std::size_t done, std::size_t total) {
            if (progress) progress("pool claims", done, total);
        });

        ClaimsRunInfo info;
        info.approximate = stages->approximate();
        info.extractor = stages->extractor().name();
        info.grader = stages->grader().name();
        info.judge = request.judge->name();
        info.corpus_identity = identity;
        info.embedder = embedder->name();
        info.pool_papers = stats.papers;
        info.params = params;
        info.judge_view = options.llm.judge_view;
        info.llm_judge = request.judge == stages->llm_judge() && request.judge != nullptr;

        const std::size_t n = prepared.proposals.size();
        std::vector<std::string> records(n);
        std::size_t finished = 0;
        if (progress) progress("proposals", 0, n);
        pipeline.run(prepared.proposals, [&](const ProposalResult& r) {
            records[r.index] = proposal_result_json(r, claims_context_json(info, prepared.provenance[r.index]));
            if (progress) progress("proposals", ++finished, n);
        });

        std::string out = "{\"results\":[";
        for (std::size_t i = 0; i < n; ++i) {
            if (i > 0) out += ',';
            out += records[i];
        }
        nlohmann::ordered_json pool{{"papers", stats.papers},
                                    {"claims", stats.claims},
                                    {"extracted_now", stats.extracted_now},
                                    {"embedded_now", stats.embedded_now},
                                    {"failed", stats.failed}};
        out += "],\"approximate\":" + std::string(info.approximate ? "true" : "false") + ",\"pool\":" + pool.dump() + "}";
        return out;
    }
};

ClaimsService::ClaimsService(ClaimsServiceOptions options, std::unique_ptr<Embedder> embedder) {
    if (!embedder) throw UsageError("the claims service needs an encoder for claim texts");
    impl_ = std::make_shared<Impl>(std::move(options), std::move(embedder));
    Impl& s = *impl_;
    const auto& recorded = s.corpus.manifest().embedder;
    if (recorded && !same_encoder(recorded->name, s.embedder->name()))
        throw UsageError("the corpus " + s.corpus.dir() + " was embedded with '" + recorded->name +
                         "', but claims would be embedded with '" + s.embedder->name() + "'");
    check_outside(s.options.claims_cache, s.options.corpus_dir, "--claims-cache");
    check_outside(s.options.llm.response_cache, s.options.corpus_dir, "--cache");
    if (s.options.window == 0) throw UsageError("--window must be at least 1");
    s.params = claimnov_params(s.options.method);
    s.store = std::make_unique<PoolClaimStore>(s.options.claims_cache.empty() ? ":memory:" : s.options.claims_cache);
    s.stages = std::make_unique<ClaimStageSet>(s.options.llm);
}

ClaimsService::~ClaimsService() = default;

std::function<std::string(const JobProgressFn&)> ClaimsService::make_job(const std::string& body) {
    auto request = std::make_shared<ClaimsRequest>(impl_->parse(body));
    return [impl = impl_, request](const JobProgressFn& progress) { return impl->run(*request, progress); };
}

bool ClaimsService::approximate() const { return impl_->stages->approximate(); }

std::string ClaimsService::describe() const {
    ClaimStageSet& s = *impl_->stages;
    std::string line = "claims: extractor " + s.extractor().name() + ", grader " + s.grader().name() + ", judge " +
                       s.judge().name() + ", pool claims " +
                       (impl_->options.claims_cache.empty() ? std::string("in memory") : impl_->options.claims_cache);
    if (s.approximate()) line += " (offline stages: an approximation of the LLM method)";
    return line;
}

void add_claims_endpoint(Server& server, std::shared_ptr<ClaimsService> service) {
    server.add_progress_job_endpoint("/v1/claims", "claims",
                                     [service](const std::string& body) { return service->make_job(body); });
}

}  // namespace novelty::host
