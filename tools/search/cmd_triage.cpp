// novelty triage: deduplicate ideas, score each cluster's representative with RND and its nearest
// paper, and spend ClaimNov (LLM calls) only on the representatives those leave uncertain, or the
// highest RND ones, within a budget (docs/dedup.md). One record per input idea, resumable.
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"

#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/claimnov/claims_setup.hpp"
#include "novelty_host/jobs/progress.hpp"
#include "novelty_host/jobs/resumable_output.hpp"
#include "novelty_host/llm/shared_embedder.hpp"
#include "novelty_host/triage/triage.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

namespace novelty::cli {

namespace {

namespace fs = std::filesystem;

struct TriageArgs {
    std::string corpus;
    QueryFlags ideas;
    double threshold = 0.8;
    std::string representative = "central";
    std::size_t p = 100, q = 50;
    std::string gate = "nearest";
    std::string band;  ///< "" = the gate's default
    std::string select = "band";
    long long budget = -1;
    host::ClaimsLlmSettings llm;
    std::string cache;
    std::string claims_cache;
    std::size_t window = 64;
    double rule_threshold = 0.5;
    std::string out;
    bool resume = false;
    DeviceFlags device;
};

std::unique_ptr<host::PoolClaimStore> open_claim_store(const std::string& path, bool given) {
    try {
        if (!given) fs::create_directories(fs::path(path).parent_path());
        return std::make_unique<host::PoolClaimStore>(path);
    } catch (const std::exception& e) {
        if (given) throw;
        std::fprintf(stderr, "novelty: warning: cannot write the pool claim cache %s (%s); keeping pool claims in memory\n",
                     path.c_str(), e.what());
        return std::make_unique<host::PoolClaimStore>(":memory:");
    }
}

// The ideas with their vectors (embedded with the corpus's encoder); ideas without text stay in,
// as empty ones.
host::TriageInput load_triage_input(const TriageArgs& a, const Corpus& corpus,
                                    const std::function<std::unique_ptr<Embedder>()>& make) {
    IdeaVectorsOptions options;
    options.path = a.ideas.path;
    options.vectors_path = a.ideas.vectors;
    options.dim = corpus.manifest().dim;
    options.make_embedder = make;
    options.textless = [](const QueryRecord&, float*) {};
    host::ProgressBar bar("embed ideas", "ideas", a.ideas.quiet);
    options.on_embed_progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
    if (options.path.size() >= 4 && options.path.compare(options.path.size() - 4, 4, ".npy") == 0)
        throw UsageError("--ideas must be a .jsonl file: ClaimNov needs each idea's text (give vectors with --vectors)");
    IdeaVectors ideas = load_idea_vectors(options);
    bar.finish();
    host::TriageInput input;
    input.dim = ideas.dim;
    input.vectors = std::move(ideas.vectors);
    for (const QueryRecord& r : ideas.records)
        input.ideas.push_back({{r.id, r.title, r.text, r.date, r.exclude, std::nullopt}, r.line});
    if (!a.ideas.cutoff.empty()) {
        input.cutoff = parse_cutoff(a.ideas.cutoff);
        input.cutoff_text = a.ideas.cutoff;
    }
    input.exclude = split_ids(a.ideas.exclude);
    return input;
}

host::TriageSettings settings_of(const TriageArgs& a) {
    host::TriageSettings s;
    s.threshold = a.threshold;
    s.representative = a.representative == "first" ? Representative::first : Representative::central;
    s.p = a.p;
    s.q = a.q;
    s.gate = host::parse_triage_gate(a.gate);
    std::tie(s.band_lo, s.band_hi) = a.band.empty() ? host::default_band(s.gate) : host::parse_band(a.band, s.gate);
    s.select = host::parse_triage_select(a.select);
    if (a.budget >= 0) s.budget = static_cast<std::size_t>(a.budget);
    if (s.select == host::TriageSelect::top && !s.budget) throw UsageError("--select top needs --budget N");
    s.rule_threshold = a.rule_threshold;
    s.window = a.window;
    return s;
}

int run_triage_command(const TriageArgs& a) {
    const host::TriageSettings settings = settings_of(a);
    const Corpus corpus = Corpus::open(a.corpus);
    EmbedderFlags embedder_flags = a.ideas.embedder;
    embedder_flags.threads = a.ideas.threads;
    const auto views = host::share_embedder(embedder_for_corpus(corpus, embedder_flags));
    const host::TriageInput input = load_triage_input(a, corpus, views);
    auto backend = make_search_backend(a.device, a.ideas.threads, a.ideas.quiet);

    const std::string cache_dir = corpus.dir() + "/cache";
    const bool cache_writable = writable_dir(cache_dir);
    auto store = open_claim_store(a.claims_cache.empty() ? cache_dir + "/claims.sqlite" : a.claims_cache, !a.claims_cache.empty());
    host::ClaimsLlmSettings llm = a.llm;
    llm.response_cache = a.cache == "none" ? "" : !a.cache.empty() ? a.cache : cache_writable ? cache_dir + "/llm_responses.sqlite" : "";
    host::ClaimStageSet stages(llm);
    const auto claim_embedder = views();

    host::ResumableOutput output(a.out, a.resume);
    std::map<std::string, host::ProgressBar> bars;
    host::TriageContext context;
    context.corpus = &corpus;
    context.backend = backend.get();
    context.stages = &stages;
    context.embedder = claim_embedder.get();
    context.store = store.get();
    context.write_cache = cache_writable;
    context.progress = [&](const std::string& stage, std::size_t done, std::size_t total) {
        auto it = bars.find(stage);
        if (it == bars.end()) it = bars.try_emplace(stage, stage, "items", a.ideas.quiet).first;
        it->second.update(done, total);
    };
    const host::TriageSummary summary =
        host::run_triage(context, settings, input, output.done(), [&](const std::string& id, const std::string& json) {
            output.write(id, json);
        });
    for (auto& [stage, bar] : bars) bar.finish();
    std::vector<std::string> ids;
    for (const auto& idea : input.ideas) ids.push_back(idea.proposal.id);
    output.finish(ids);
    if (!a.ideas.quiet) {
        std::fprintf(stderr,
                     "novelty: triaged %s in %s: %s scored, %s checked with ClaimNov (%.1f%% of the ideas), %s empty, %s "
                     "with errors, %s from an earlier run, into %s\n",
                     count_of(summary.ideas, "idea").c_str(), count_of(summary.clusters, "cluster").c_str(),
                     thousands(summary.representatives).c_str(), thousands(summary.checked).c_str(),
                     summary.ideas ? 100.0 * summary.checked / summary.ideas : 0.0, thousands(summary.empty).c_str(),
                     thousands(summary.errors).c_str(), thousands(summary.resumed).c_str(), a.out.c_str());
        for (const auto* client : stages.clients()) std::fputs(host::usage_report(*client).c_str(), stderr);
    }
    return exit_ok;
}

void add_llm_flags(CLI::App* cmd, TriageArgs& a) {
    cmd->add_option("--llm", a.llm.llm,
                    "ClaimNov extraction and grading: 'offline' (default, an approximation), an OpenAI-compatible base "
                    "URL, or 'env'");
    cmd->add_option("--llm-model", a.llm.llm_model, "Model name (default: $NOVELTY_LLM_MODEL)");
    cmd->add_option("--llm-key", a.llm.llm_key, "API key (default: $NOVELTY_LLM_API_KEY, else $OPENAI_API_KEY)");
    cmd->add_option("--judge", a.llm.judge, "Verdict: 'rule' (default), 'llm' or another base URL (as novelty claims)");
    cmd->add_option("--judge-model", a.llm.judge_model, "Model of a --judge URL (default: the --llm-model)");
    cmd->add_option("--concurrency", a.llm.concurrency, "LLM requests in flight at most (default 8)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
        ->each([&a](const std::string&) { a.llm.concurrency_given = true; });
    cmd->add_option("--timeout", a.llm.timeout_seconds, "Seconds per LLM attempt (default 120)");
    cmd->add_option("--retries", a.llm.retries, "Retries per LLM call after the first attempt (default 5)");
    cmd->add_option("--cache", a.cache, "LLM response cache (SQLite); default CORPUS/cache/llm_responses.sqlite; 'none'");
    cmd->add_option("--claims-cache", a.claims_cache, "Pool claim store (SQLite); default CORPUS/cache/claims.sqlite");
    cmd->add_option("--window", a.window, "Proposals in flight at once (default 64)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
    cmd->add_option("--rule-threshold", a.rule_threshold,
                    "ClaimNov no-judge rule: fail below this N(P) when a claim is strongly matched (default 0.5)")
        ->check(non_empty_value());
}

}  // namespace

void add_triage_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<TriageArgs>();
    CLI::App* cmd = app.add_subcommand(
        "triage", "Deduplicate ideas, score each cluster's representative with RND and its nearest paper, and run "
                  "ClaimNov only on those the cheap signal leaves uncertain (--gate, --band) or the highest RND ones, "
                  "within --budget; one record per input idea");
    cmd->add_option("--corpus", a->corpus, "Corpus directory (with vectors; its encoder embeds the ideas)")->required();
    cmd->add_option("--ideas", a->ideas.path,
                    "Ideas: .jsonl with \"id\", \"title\"/\"text\", optional \"date\" and \"exclude\" (a record without "
                    "text is kept, marked empty)")
        ->required();
    cmd->add_option("--vectors", a->ideas.vectors, "N x D .npy with the vector of each idea (row i = line i)");
    cmd->add_option("--out", a->out, "Output JSON Lines, one record per idea in input order (OUT.partial while running)")
        ->required();
    cmd->add_flag("--resume", a->resume, "Continue an interrupted run: clusters already in OUT.partial are skipped");
    cmd->add_option("--threshold", a->threshold, "Dedup: cosine at or above which ideas are linked (default 0.8)")
        ->check(non_empty_value());
    cmd->add_option("--representative", a->representative, "Dedup: central (default) or first")
        ->check(CLI::IsMember({"central", "first"}));
    cmd->add_option("--p", a->p, "RND: neighbours whose densities form the reference (default 100)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{2048}));
    cmd->add_option("--q", a->q, "RND: neighbours averaged into a density (default 50)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{2048}));
    cmd->add_option("--gate", a->gate,
                    "The cheap signal that decides without ClaimNov: nearest (default: the most similar paper's cosine; "
                    "at or above the band's middle the idea fails, that paper its source) or rnd (RND; at or above the "
                    "middle the idea passes)")
        ->check(CLI::IsMember({"nearest", "rnd"}));
    cmd->add_option("--band", a->band,
                    "The gate's uncertain band LO,HI, checked with ClaimNov (default 0.65,0.95 for nearest, 20,60 for "
                    "rnd); outside it, and when not checked, the gate decides");
    cmd->add_option("--select", a->select,
                    "Which representatives ClaimNov checks: band (default: the gate's value in --band, the middle first), top "
                    "(highest RND first; needs --budget) or all (every one: the reference)")
        ->check(CLI::IsMember({"band", "top", "all"}));
    cmd->add_option("--budget", a->budget, "Representatives checked with ClaimNov at most (default: no limit)")
        ->check(CLI::Range(0LL, 1LL << 40));
    cmd->add_option("--cutoff", a->ideas.cutoff, "Only papers published on or before this date, for ideas without a \"date\"");
    cmd->add_option("--exclude", a->ideas.exclude, "Comma-separated paper ids left out for every idea");
    add_llm_flags(cmd, *a);
    cmd->add_option("--threads", a->ideas.threads, "Worker threads (default: all cores)");
    add_device_flags(cmd, a->device);
    add_embedder_flags(*cmd, a->ideas.embedder);
    cmd->add_flag("-q,--quiet", a->ideas.quiet, "No progress or summary on stderr");
    cmd->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_triage_command(*a); }); });
}

}  // namespace novelty::cli
