#include "novelty_host/triage/triage_service.hpp"

#include "server/server_requests.hpp"

#include "novelty/search/backends.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/llm/http_embedder.hpp"
#include "novelty_host/claimnov/pool_claim_store.hpp"
#include "novelty_host/triage/triage.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <sstream>

namespace novelty::host {

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& problem) { throw UsageError(where + ": " + problem, where); }

double number_field(const nlohmann::json& body, const std::string& key, double fallback) {
    const auto it = body.find(key);
    if (it == body.end() || it->is_null()) return fallback;
    if (!it->is_number()) bad(key, "must be a number");
    return it->get<double>();
}

std::string string_field(const nlohmann::json& body, const std::string& key, const std::string& fallback) {
    const auto it = body.find(key);
    if (it == body.end() || it->is_null()) return fallback;
    if (!it->is_string()) bad(key, "must be a string");
    return it->get<std::string>();
}

TriageSettings settings_of(const nlohmann::json& body, const ClaimsServiceOptions& claims) {
    TriageSettings s;
    s.threshold = number_field(body, "threshold", s.threshold);
    if (!(s.threshold >= -1 && s.threshold <= 1)) bad("threshold", "must be a cosine similarity in [-1, 1]");
    const std::string rep = string_field(body, "representative", "central");
    if (rep != "central" && rep != "first") bad("representative", "must be \"central\" or \"first\"");
    s.representative = rep == "first" ? Representative::first : Representative::central;
    const std::string gate = string_field(body, "gate", "nearest");
    if (gate != "nearest" && gate != "rnd") bad("gate", "must be \"nearest\" or \"rnd\"");
    s.gate = parse_triage_gate(gate);
    std::tie(s.band_lo, s.band_hi) = default_band(s.gate);
    if (auto band = body.find("band"); band != body.end() && !band->is_null()) {
        if (!band->is_array() || band->size() != 2 || !(*band)[0].is_number() || !(*band)[1].is_number())
            bad("band", "must be [LO, HI], two numbers");
        std::ostringstream text;
        text.precision(17);
        text << (*band)[0].get<double>() << "," << (*band)[1].get<double>();
        try {
            std::tie(s.band_lo, s.band_hi) = parse_band(text.str(), s.gate, "band");
        } catch (const UsageError&) {
            // Quoted as sent: the 17-digit text above is for the parse, not for people.
            bad("band", band->dump() + " is out of range: needs " +
                            (s.gate == TriageGate::rnd ? "0 <= LO <= HI <= 100 (RND)" : "-1 <= LO <= HI <= 1 (a similarity)"));
        }
    }
    try {
        s.select = parse_triage_select(string_field(body, "select", "band"));
    } catch (const UsageError&) {
        bad("select", "must be \"band\", \"top\" or \"all\"");
    }
    if (auto budget = body.find("budget"); budget != body.end() && !budget->is_null()) {
        if (!budget->is_number_integer() || budget->get<long long>() < 0) bad("budget", "must be a count (0 or more)");
        s.budget = budget->get<std::size_t>();
    }
    if (s.select == TriageSelect::top && !s.budget) bad("select", "\"top\" needs a \"budget\"");
    s.p = parse_count(body, "p", s.p, SearchBackend::max_k);
    s.q = parse_count(body, "q", s.q, SearchBackend::max_k);
    s.rule_threshold = claims.method.threshold;
    s.window = claims.window;
    return s;
}

struct TriageRequest {
    TriageSettings settings;
    RecordBatch records;
    std::optional<PartialDate> cutoff;
    std::string cutoff_text;
    std::vector<std::string> exclude;
};

}  // namespace

struct TriageService::Impl {
    TriageServiceOptions options;
    std::unique_ptr<Embedder> embedder;
    Corpus corpus;
    std::unique_ptr<PoolClaimStore> store;
    std::unique_ptr<ClaimStageSet> stages;
    std::unique_ptr<SearchBackend> backend;
    std::mutex run_mutex;

    Impl(TriageServiceOptions o, std::unique_ptr<Embedder> e)
        : options(std::move(o)), embedder(std::move(e)), corpus(Corpus::open(options.claims.corpus_dir)) {}

    TriageRequest parse(const std::string& text) {
        const nlohmann::json body = parse_body(text);
        refuse_unknown_keys(body, {"ideas", "threshold", "representative", "gate", "band", "select", "budget", "p", "q",
                                   "cutoff", "exclude"});
        TriageRequest request;
        RequestLimits limits;
        limits.max_records = options.claims.max_proposals;
        limits.max_text_bytes = options.claims.max_text_bytes;
        request.records = parse_records(body, "ideas", limits, corpus.manifest().dim);
        request.settings = settings_of(body, options.claims);
        request.cutoff = parse_date_field(body, "cutoff");
        if (request.cutoff) request.cutoff_text = body["cutoff"].get<std::string>();
        if (auto ex = body.find("exclude"); ex != body.end() && !ex->is_null()) {
            if (!ex->is_array()) bad("exclude", "must be an array of paper ids");
            for (const auto& id : *ex) {
                if (!id.is_string()) bad("exclude", "must be an array of paper ids (strings)");
                request.exclude.push_back(id.get<std::string>());
            }
        }
        return request;
    }

    TriageInput input_of(const TriageRequest& request, const JobProgressFn& progress) {
        TriageInput input;
        input.dim = corpus.manifest().dim;
        input.cutoff = request.cutoff;
        input.cutoff_text = request.cutoff_text;
        input.exclude = request.exclude;
        const std::size_t n = request.records.size();
        input.vectors.assign(n * input.dim, 0.0f);
        std::vector<std::size_t> to_embed;
        for (std::size_t i = 0; i < n; ++i) {
            const QueryRecord& r = request.records.records[i];
            input.ideas.push_back({{r.id, r.title, r.text, r.date, r.exclude, std::nullopt}, i + 1});
            if (request.records.given_vector(i)) {
                // Without text the idea stays empty (ClaimNov reads the text), as in the CLI.
                std::copy_n(request.records.given.begin() + i * input.dim, input.dim, input.vectors.begin() + i * input.dim);
            } else if (r.has_text()) {
                to_embed.push_back(i);
            }
        }
        if (progress) progress("embed", 0, to_embed.size());
        if (!to_embed.empty()) {
            const EmbedSettings settings{embedder->name(), to_embed.size(), {}, embedder->precision()};
            embed_records(request.records.records, to_embed,
                          [this](const std::vector<std::string>& texts) { return embedder->embed(texts); }, settings,
                          input.vectors, input.dim);
        }
        if (progress) progress("embed", to_embed.size(), to_embed.size());
        return input;
    }

    std::string run(const TriageRequest& request, const JobProgressFn& progress) {
        std::lock_guard lock(run_mutex);
        const TriageInput input = input_of(request, progress);
        TriageContext context;
        context.corpus = &corpus;
        context.backend = backend.get();
        context.stages = stages.get();
        context.embedder = embedder.get();
        context.store = store.get();
        context.write_cache = false;
        context.progress = progress;
        std::map<std::string, std::string> records;
        const TriageSummary summary = run_triage(context, request.settings, input, {},
                                                 [&](const std::string& id, const std::string& json) { records[id] = json; });
        std::string out = "{\"results\":[";
        for (std::size_t i = 0; i < input.ideas.size(); ++i) {
            if (i > 0) out += ',';
            out += records.at(input.ideas[i].proposal.id);
        }
        nlohmann::ordered_json s{{"ideas", summary.ideas},         {"clusters", summary.clusters},
                                 {"empty", summary.empty},         {"scored", summary.representatives},
                                 {"checked", summary.checked},     {"errors", summary.errors},
                                 {"approximate", stages->approximate()}};
        out += "],\"summary\":" + s.dump() + "}";
        return out;
    }
};

TriageService::TriageService(TriageServiceOptions options, std::unique_ptr<Embedder> embedder) {
    if (!embedder) throw UsageError("the triage service needs an encoder for idea texts");
    impl_ = std::make_shared<Impl>(std::move(options), std::move(embedder));
    Impl& s = *impl_;
    const auto& recorded = s.corpus.manifest().embedder;
    if (recorded && !same_encoder(recorded->name, s.embedder->name()))
        throw UsageError("the corpus " + s.corpus.dir() + " was embedded with '" + recorded->name +
                         "', but ideas would be embedded with '" + s.embedder->name() + "'");
    if (s.options.claims.window == 0) throw UsageError("--window must be at least 1");
    s.store = std::make_unique<PoolClaimStore>(s.options.claims.claims_cache.empty() ? ":memory:" : s.options.claims.claims_cache);
    s.stages = std::make_unique<ClaimStageSet>(s.options.claims.llm);
    s.backend = make_backend(s.options.backend);
    s.backend->tuning.threads = s.options.threads;
}

TriageService::~TriageService() = default;

std::function<std::string(const JobProgressFn&)> TriageService::make_job(const std::string& body) {
    auto request = std::make_shared<TriageRequest>(impl_->parse(body));
    return [impl = impl_, request](const JobProgressFn& progress) { return impl->run(*request, progress); };
}

void add_triage_endpoint(Server& server, std::shared_ptr<TriageService> service) {
    server.add_progress_job_endpoint("/v1/triage", "triage",
                                     [service](const std::string& body) { return service->make_job(body); });
}

}  // namespace novelty::host
