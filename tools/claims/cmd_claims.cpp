// novelty claims: the ClaimNov check (docs/claimnov.md). Typed claims of each proposal, per-claim
// retrieval of pool claims, graded entailment, N(P) and a verdict, through an OpenAI-compatible
// LLM or fully offline (an approximation, labelled as such in every record).
#include "claims_flags.hpp"
#include "cli_common.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"

#include "util/message_text.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/request/query_records.hpp"
#include "novelty_host/llm/chat_client.hpp"
#include "novelty_host/claimnov/claimnov_pipeline.hpp"
#include "novelty_host/claimnov/claims_setup.hpp"
#include "novelty_host/jobs/progress.hpp"
#include "novelty_host/jobs/resumable_output.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

namespace novelty::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct ClaimsArgs {
    std::string corpus;
    std::string proposals;
    std::string pool;
    std::string cutoff;
    std::string exclude;
    host::ClaimsLlmSettings llm;        ///< its response_cache is set from --cache
    host::ClaimsMethodSettings method;
    std::string cache;
    std::string claims_cache;
    std::size_t window = 64;
    bool resume = false;
    std::string out;
    EmbedderFlags embedder;
    FilterFlags filter;  ///< metadata filters for every proposal
    bool quiet = false;
};

/// Pool paper ids from a file: one id per line, or JSON Lines records with an "id".
std::vector<std::pair<std::string, std::size_t>> read_pool_ids(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path, 0, "cannot open the file");
    std::vector<std::pair<std::string, std::size_t>> ids;
    std::string line;
    for (std::size_t n = 1; std::getline(in, line); ++n) {
        const auto b = line.find_first_not_of(" \t\r");
        if (b == std::string::npos) continue;
        const std::string text = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
        if (text[0] == '{') {
            nlohmann::json record;
            try {
                record = parse_json(text);
            } catch (const JsonError& e) {
                throw InputError(path, n, std::string("malformed JSON: ") + e.what());
            }
            const auto it = record.find("id");
            if (it == record.end() || !(it->is_string() || it->is_number_integer()))
                throw InputError(path, n, "the record has no \"id\"");
            ids.emplace_back(it->is_string() ? it->get<std::string>() : std::to_string(it->get<long long>()), n);
        } else {
            ids.emplace_back(text, n);
        }
    }
    if (ids.empty()) throw InputError(path, 0, "the pool file names no paper");
    return ids;
}

/// Opens the claim store at `path`, or in memory (with a warning) when it cannot be written.
std::unique_ptr<host::PoolClaimStore> open_store(const std::string& path, bool given) {
    try {
        if (!given) fs::create_directories(fs::path(path).parent_path());
        return std::make_unique<host::PoolClaimStore>(path);
    } catch (const std::exception& e) {
        if (given) throw;
        std::fprintf(stderr,
                     "novelty: warning: cannot write the pool claim cache %s (%s); pool claims are kept in memory "
                     "for this run only (give --claims-cache PATH to keep them)\n",
                     path.c_str(), e.what());
        return std::make_unique<host::PoolClaimStore>(":memory:");
    }
}

/// The proposals as the shared setup takes them, each "pool" resolved to corpus rows (an unknown
/// id is an input error naming the line).
std::vector<host::ClaimsProposalInput> proposal_inputs(const Corpus& corpus, const std::vector<QueryRecord>& records,
                                                       const std::string& path) {
    std::vector<host::ClaimsProposalInput> inputs;
    for (const QueryRecord& r : records) {
        if (!r.has_text()) throw InputError(path, r.line, "proposal " + quote_value(r.id) + " has no \"title\" or \"text\"");
        inputs.push_back({r.id, r.title, r.text, r.date, r.exclude, std::nullopt});
        if (!r.pool) continue;
        auto& rows = inputs.back().pool_rows.emplace();
        for (const std::string& id : *r.pool) {
            const auto row = corpus.find_row(id);
            if (!row) throw InputError(path, r.line, "pool paper " + quote_value(id) + " is not in the corpus " + corpus.dir());
            rows.push_back(*row);
        }
    }
    return inputs;
}

/// The --pool papers as corpus rows (an unknown id is an input error naming its line); none
/// without --pool.
std::optional<std::vector<std::size_t>> pool_rows_of(const Corpus& corpus, const std::string& pool) {
    if (pool.empty()) return std::nullopt;
    std::vector<std::size_t> rows;
    for (const auto& [id, line] : read_pool_ids(pool)) {
        const auto row = corpus.find_row(id);
        if (!row) throw InputError(pool, line, "paper " + quote_value(id) + " is not in the corpus " + corpus.dir());
        rows.push_back(*row);
    }
    return rows;
}

/// The LLM response cache: --cache, "" for none, else the corpus's own when it is writable (with
/// a warning when it is not and an LLM is in use).
std::string response_cache_of(const ClaimsArgs& a, const std::string& cache_dir) {
    if (a.cache == "none") return "";
    if (!a.cache.empty()) return a.cache;
    if (writable_dir(cache_dir)) return cache_dir + "/llm_responses.sqlite";
    if (a.llm.llm != "offline" || (a.llm.judge != "rule" && a.llm.judge != "auto"))
        std::fprintf(stderr, "novelty: warning: %s is read-only; LLM answers are not cached (give --cache PATH)\n",
                     cache_dir.c_str());
    return "";
}

void report_pool(const host::PoolStats& stats, bool quiet) {
    if (!quiet)
        std::fprintf(stderr, "novelty: pool: %s, %s (%s extracted now, %s embedded now)\n",
                     count_of(stats.papers, "paper").c_str(), count_of(stats.claims, "claim").c_str(),
                     thousands(stats.extracted_now).c_str(), thousands(stats.embedded_now).c_str());
    if (stats.failed > 0) {
        std::fprintf(stderr, "novelty: warning: claim extraction failed for %s (they count as having no claims; a rerun retries them)\n",
                     count_of(stats.failed, "pool paper").c_str());
        for (const auto& f : stats.failures) std::fprintf(stderr, "  %s\n", f.c_str());
    }
}

/// What every record of the run shares: its stages, corpus, embedder, pool size and constants.
host::ClaimsRunInfo run_info(host::ClaimStageSet& stages, const Corpus& corpus, const std::string& embedder,
                             std::size_t pool_papers, const ClaimNovParams& params,
                             const host::ClaimsLlmSettings& settings) {
    host::ClaimsRunInfo info;
    info.approximate = stages.approximate();
    info.extractor = stages.extractor().name();
    info.grader = stages.grader().name();
    info.judge = stages.judge().name();
    info.corpus_identity = corpus.identity();
    info.embedder = embedder;
    info.pool_papers = pool_papers;
    info.params = params;
    info.judge_view = settings.judge_view;
    info.llm_judge = stages.llm_judge() != nullptr && &stages.judge() == stages.llm_judge();
    return info;
}

/// One proposal's line of the table on stdout.
void print_row(const host::ProposalResult& r) {
    if (!r.error.empty())
        std::printf("%-24s %8s %-8s %s\n", r.id.substr(0, 24).c_str(), "-", "error", r.error.c_str());
    else
        std::printf("%-24s %8.3f %-8s %s\n", r.id.substr(0, 24).c_str(), r.novelty.novelty,
                    r.verdict.fail ? "fail" : "pass", r.verdict.source.value_or("").c_str());
}

/// Renames the finished output into place and says what it holds.
void finish_output(host::ResumableOutput& output, const std::vector<host::PipelineProposal>& proposals,
                   std::size_t n_run, std::size_t n_failed, std::size_t n_errors, const std::string& out) {
    std::vector<std::string> ids;
    for (const auto& p : proposals) ids.push_back(p.id);
    output.finish(ids);
    std::fprintf(stderr, "novelty: judged %s (%s from an earlier run): %s failed, %s with errors, into %s\n",
                 count_of(proposals.size(), "proposal").c_str(), thousands(proposals.size() - n_run).c_str(),
                 thousands(n_failed).c_str(), thousands(n_errors).c_str(), out.c_str());
}

int run_claims(const ClaimsArgs& a) {
    refuse_output_over_inputs("--out", a.out, {a.proposals, a.pool});
    const Corpus corpus = Corpus::open(a.corpus);
    const std::vector<QueryRecord> records = read_query_records(a.proposals);
    std::optional<PartialDate> cutoff;
    if (!a.cutoff.empty()) cutoff = parse_cutoff(a.cutoff);
    const std::vector<std::string> global_exclude = split_ids(a.exclude);

    // Per proposal: visible row prefix and excluded rows; the pool: the --pool papers, else
    // every paper any proposal can see.
    const std::vector<host::ClaimsProposalInput> inputs = proposal_inputs(corpus, records, a.proposals);
    const std::optional<std::vector<std::size_t>> pool_rows = pool_rows_of(corpus, a.pool);
    const auto filters = record_filters(corpus, records, run_filter(a.filter));
    host::PreparedClaims prepared =
        host::prepare_claims(corpus, inputs, cutoff, a.cutoff, global_exclude, pool_rows, filters);
    const std::vector<host::PipelineProposal>& proposals = prepared.proposals;

    // Caches live with the corpus when it is writable.
    const std::string cache_dir = corpus.dir() + "/cache";
    const std::string claims_cache = !a.claims_cache.empty() ? a.claims_cache : cache_dir + "/claims.sqlite";
    auto store = open_store(claims_cache, !a.claims_cache.empty());
    const std::string response_cache = response_cache_of(a, cache_dir);

    // Stages.
    const ClaimNovParams params = host::claimnov_params(a.method);
    host::ClaimsLlmSettings settings = a.llm;
    settings.response_cache = response_cache;
    host::ClaimStageSet stages(settings);
    const bool approximate = stages.approximate();

    auto embedder = embedder_for_corpus(corpus, a.embedder);
    host::PipelineOptions options;
    options.window = a.window;
    options.params = params;
    options.cancel = [&] { stages.cancel(); };
    host::ClaimNovPipeline pipeline(stages.extractor(), stages.grader(), stages.judge(), *embedder, options);

    host::ProgressBar pool_bar("pool claims", "papers", a.quiet);
    const host::PoolStats stats =
        pipeline.prepare_pool(std::move(prepared.pool), *store, [&](std::size_t done, std::size_t total) { pool_bar.update(done, total); });
    pool_bar.finish();
    report_pool(stats, a.quiet);

    const host::ClaimsRunInfo info = run_info(stages, corpus, embedder->name(), stats.papers, params, settings);
    auto context_of = [&](std::size_t i) { return host::claims_context_json(info, prepared.provenance[i]); };

    std::unique_ptr<host::ResumableOutput> output;
    std::vector<host::PipelineProposal> todo;
    std::vector<std::size_t> todo_index;
    if (!a.out.empty()) output = std::make_unique<host::ResumableOutput>(a.out, a.resume);
    for (std::size_t i = 0; i < proposals.size(); ++i)
        if (!output || !output->done().count(proposals[i].id)) {
            todo.push_back(proposals[i]);
            todo_index.push_back(i);
        }
    if (!output) std::printf("%-24s %8s %-8s %s\n", "proposal", "N(P)", "verdict", "source");
    host::ProgressBar bar("claims", "proposals", a.quiet || a.out.empty());
    std::size_t n_done = 0, n_failed = 0, n_errors = 0;
    pipeline.run(todo, [&](const host::ProposalResult& r) {
        const std::size_t i = todo_index[r.index];
        if (!r.error.empty()) ++n_errors;
        else if (r.verdict.fail) ++n_failed;
        if (output) output->write(r.id, host::proposal_result_json(r, context_of(i)));
        else print_row(r);
        bar.update(++n_done, todo.size());
    });
    bar.finish();
    if (approximate && !a.quiet)
        std::fprintf(stderr, "novelty: note: offline stages (%s) are an approximation of the LLM method\n", host::offline_label);
    if (output) finish_output(*output, proposals, todo.size(), n_failed, n_errors, a.out);
    if (!a.quiet)
        for (const auto* client : stages.clients()) std::fputs(host::usage_report(*client).c_str(), stderr);
    return exit_ok;
}

}  // namespace

void add_claims_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<ClaimsArgs>();
    CLI::App* cmd = app.add_subcommand(
        "claims", "ClaimNov: typed contribution claims of each proposal, matched per dimension against pool claims, graded "
                  "1-5, aggregated into a novelty score N(P) and judged pass/fail with the source paper named");
    cmd->add_option("--corpus", a->corpus, "Corpus directory (its papers are the pool; its embedder embeds claims)")->required();
    cmd->add_option("--proposals", a->proposals,
                    "Proposals: .jsonl with \"id\", \"title\", \"text\" and optional \"date\" (cutoff), \"exclude\" ids "
                    "and \"pool\" ids (its own candidate pool, which wins over --pool)")
        ->required();
    cmd->add_option("--pool", a->pool, "Pool papers: a file of corpus ids (one per line, or JSON Lines with \"id\"); "
                                       "default: every paper the proposal's cutoff allows");
    cmd->add_option("--cutoff", a->cutoff, "Only papers published on or before this date, for proposals without a \"date\"");
    cmd->add_option("--exclude", a->exclude, "Comma-separated paper ids left out of every proposal's pool");
    add_filter_flags(*cmd, a->filter);
    add_claims_stage_flags(*cmd, a->llm, a->method, "");
    cmd->add_option("--cache", a->cache,
                    "LLM response cache (SQLite); default CORPUS/cache/llm_responses.sqlite; 'none' for no cache");
    cmd->add_option("--claims-cache", a->claims_cache,
                    "Pool claim store (SQLite); default CORPUS/cache/claims.sqlite (in memory when the corpus is read-only)");
    cmd->add_option("--window", a->window, "Proposals in flight at once (default 64)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
    cmd->add_flag("--resume", a->resume, "Continue an interrupted run: proposals already in OUT.partial are skipped");
    cmd->add_option("--out", a->out, "Output JSON Lines (written as OUT.partial while running); default: a table on stdout");
    add_embedder_flags(*cmd, a->embedder);
    cmd->add_flag("-q,--quiet", a->quiet, "No progress or summary on stderr");
    cmd->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_claims(*a); }); });
}

}  // namespace novelty::cli
