// novelty score: RND, ND (absolute density), HD and ON for each idea, with its nearest papers as
// evidence and a provenance block; JSON Lines, CSV, or a table on the terminal.
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"
#include "record_sink.hpp"

#include "novelty/util/error.hpp"
#include "novelty/request/result_json.hpp"
#include "novelty/request/score_run.hpp"
#include "novelty/request/scope.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

namespace novelty::cli {

namespace {

/// Ideas whose densities are planned together (one Scorer::score call): large enough for the
/// plan to see that a job reaches most of the corpus, small enough to bound the results held
/// (about 2 KB an idea) and to write them as the job goes.
constexpr std::size_t ideas_per_plan = 16384;

struct ScoreArgs {
    std::string corpus;
    QueryFlags ideas;
    std::size_t p = 100;
    std::size_t q = 50;
    std::string methods = "rnd,hd,on,density";
    std::string split;
    std::string historical_from;  ///< "" = the paper's 2011 when it lies before the split
    bool include_self = false;
    std::size_t extra = 8;
    std::string densities = "auto";
    std::size_t evidence = 10;
    DeviceFlags device;
    std::string out;
    std::string format = "jsonl";
    bool resume = false;
};

std::set<std::string> parse_methods(const std::string& list) {
    std::set<std::string> methods;
    std::stringstream ss(list);
    for (std::string m; std::getline(ss, m, ',');) {
        if (m.empty()) continue;
        methods.insert(m);  // each checked by check_score_settings
    }
    if (methods.empty()) throw UsageError("--methods names no method");
    return methods;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

/// The run's settings from the flags.
ScoreRunSettings score_settings(const ScoreArgs& args) {
    ScoreRunSettings s;
    s.p = args.p;
    s.q = args.q;
    s.extra = args.extra;
    s.evidence = args.evidence;
    s.include_self = args.include_self;
    s.methods = parse_methods(args.methods);
    s.split = args.split;
    s.historical_from = args.historical_from;
    s.densities = density_method(args.densities);
    return s;
}

/// One idea's result: a table row, a CSV row, or a JSON line (no newline).
std::string score_line(RecordSink::Kind kind, const Corpus& corpus, const ScoreReportContext& report,
                       const QueryInput& input, std::size_t i, const IdeaScore& s) {
    const QueryRecord& record = input.records[i];
    const RecordScope& scope = input.scopes[i];
    if (kind == RecordSink::Kind::jsonl) return score_result_json(corpus, report, record.id, s, scope.cutoff, scope.excluded_ids);
    const auto [nearest_id, nearest_title] = corpus.id_and_title(static_cast<std::size_t>(s.neighbor_rows[0]));
    char text[512];
    if (kind == RecordSink::Kind::table) {
        std::snprintf(text, sizeof text, "%-24s %6.1f %8.4f %8.4f  %s (%.3f) %s", record.id.substr(0, 24).c_str(), s.rnd,
                      s.nd, s.hd, nearest_id.c_str(), s.neighbor_sims[0], nearest_title.substr(0, 60).c_str());
        return text;
    }
    std::snprintf(text, sizeof text, ",%.4f,%.6f,%s,%.6f,%.6f,", s.rnd, s.hd, s.on ? std::to_string(*s.on).c_str() : "",
                  s.nd, s.nd);
    std::ostringstream line;
    line << csv_field(record.id) << text << csv_field(nearest_id) << "," << s.neighbor_sims[0] << "," << scope.cutoff;
    return line.str();
}

int run_score(const ScoreArgs& args) {
    refuse_output_over_inputs("--out", args.out, {args.ideas.path, args.ideas.vectors});
    const ScoreRunSettings settings = score_settings(args);
    check_score_settings(settings);
    auto backend = make_search_backend(args.device, args.ideas.threads, args.ideas.quiet);
    const Corpus corpus = Corpus::open(args.corpus);
    const bool csv = args.format == "csv";
    const QueryInput input = load_queries(corpus, args.ideas, "ideas");
    input.check_reach(corpus.size(), args.p, args.q);

    ScoreRun run = score_run(corpus, settings, backend->label());
    run.report.ideas_precision = input.embedded_precision;  // may differ from the corpus's (docs/encoder.md)
    ScoreOptions& score_options = run.options;
    const bool reference = score_options.densities == DensityMethod::self_join;
    // One search bar per planned batch of ideas, ended when its densities start.
    std::unique_ptr<host::ProgressBar> search_bar;
    const auto end_search = [&] {
        if (search_bar) search_bar->finish();
    };
    score_options.on_search_progress = [&](std::size_t done, std::size_t total) {
        if (search_bar) search_bar->update(done, total);
    };
    host::ProgressBar density_bar("densities", reference ? "blocks" : "steps", args.ideas.quiet);
    score_options.on_density_progress = [&](std::size_t done, std::size_t total) {
        end_search();
        density_bar.update(done, total);
    };
    score_options.on_density_plan = [&](const std::string& plan) {
        end_search();
        if (!args.ideas.quiet) std::fprintf(stderr, "novelty: neighbour densities: %s\n", plan.c_str());
    };
    score_options.on_cache_warning = [](const std::string& message) {
        std::fprintf(stderr, "novelty: warning: %s\n", message.c_str());
    };
    const std::unique_ptr<SearchIndex> index = make_index(corpus, *backend, args.device);
    Scorer scorer(corpus, *index, score_options);

    char table_header[128];
    std::snprintf(table_header, sizeof table_header, "%-24s %6s %8s %8s  %s", "idea", "RND", "ND", "HD",
                  "nearest paper (similarity)");
    RecordSink sink(args.out, csv ? RecordSink::Kind::csv : RecordSink::Kind::jsonl, args.resume, table_header,
                    "id,rnd,hd,on,density,nd,nearest_id,nearest_sim,cutoff");
    const ScoreReportContext& report = run.report;
    std::vector<std::size_t> todo;
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < input.records.size(); ++i) {
        ids.push_back(input.records[i].id);
        if (!sink.done().count(input.records[i].id)) todo.push_back(i);
    }
    host::ProgressBar bar("score", "ideas", args.ideas.quiet || args.out.empty());
    std::vector<float> vectors;
    for (std::size_t begin = 0; begin < todo.size(); begin += ideas_per_plan) {
        const std::vector<std::size_t> batch(todo.begin() + begin, todo.begin() + std::min(todo.size(), begin + ideas_per_plan));
        search_bar = std::make_unique<host::ProgressBar>("search", "ideas", args.ideas.quiet);
        const std::vector<IdeaScore> scores = scorer.score(input.score_input(batch, vectors));
        end_search();
        for (std::size_t b = 0; b < batch.size(); ++b)
            sink.write(input.records[batch[b]].id, score_line(sink.kind(), corpus, report, input, batch[b], scores[b]));
        bar.update(begin + batch.size(), todo.size());
    }
    density_bar.finish();
    bar.finish();
    sink.finish(ids);
    if (!args.out.empty())
        std::fprintf(stderr, "novelty: scored %s (%s from an earlier run) into %s\n",
                     count_of(input.records.size(), "idea").c_str(), thousands(input.records.size() - todo.size()).c_str(),
                     args.out.c_str());
    const DensityCounts& counts = scorer.density_counts();
    if (!args.out.empty() && !args.ideas.quiet && !reference)
        std::fprintf(stderr,
                     "novelty: neighbour densities: %s read from the density store, %s computed in %s, %s self-joined\n",
                     thousands(counts.served).c_str(), count_of(counts.computed, "list").c_str(),
                     count_of(counts.searches, "search").c_str(), count_of(counts.joins, "prefix").c_str());
    return exit_ok;
}

}  // namespace

void add_score_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<ScoreArgs>();
    CLI::App* score = app.add_subcommand(
        "score", "Score how novel each idea is against the corpus: Relative Neighbor Density (RND, 0-100), its neighbour "
                 "density (absolute density), Historical Dissimilarity (HD) and Overall Novelty (ON), with the nearest "
                 "papers as evidence");
    score->add_option("--corpus", a->corpus, "Corpus directory (with vectors)")->required();
    score->add_option("--ideas", a->ideas.path,
                      "Ideas: .jsonl with \"id\", \"title\"/\"text\" and optional \"date\" (cutoff) and \"exclude\" ids, "
                      "or an N x D .npy")
        ->required();
    score->add_option("--vectors", a->ideas.vectors, "N x D .npy with the vector of each idea (row i = line i)");
    score->add_option("--p", a->p, "Neighbours whose densities form the reference distribution (default 100)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{2048}));
    score->add_option("--q", a->q, "Neighbours averaged into a density (default 50)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{2048}));
    score->add_option("--methods", a->methods,
                      "Scores to report: any of rnd,hd,on,density,density_p,rnd_euclid,rel_hd,rnd_hd (default "
                      "rnd,hd,on,density)");
    score->add_option("--cutoff", a->ideas.cutoff,
                      "Only papers published on or before this date, for ideas without their own \"date\"");
    score->add_option("--split", a->split,
                      "Papers before this date are historical (HD), from it on contemporary (CD, citations for ON); "
                      "without it HD uses all searchable papers and ON is null");
    score->add_option("--historical-from", a->historical_from,
                      "With --split: HD's historical papers are those from this date up to the split (default 2011, "
                      "the RND paper's window 2011-2021, when the split is later); 'none' for every paper before the "
                      "split");
    score->add_option("--exclude", a->ideas.exclude, "Comma-separated paper ids left out for every idea");
    score->add_flag("--include-self", a->include_self,
                    "Count a neighbour paper as its own nearest neighbour (distance 0) in its density, as the paper's "
                    "Algorithm 1 reads literally; default: a paper's density leaves itself out");
    score->add_option("--extra", a->extra, "Cached neighbours per paper beyond q (default 8; see novelty index)")
        ->check(CLI::NonNegativeNumber);
    score->add_option("--densities", a->densities,
                      "How the neighbours' densities missing from the corpus's density store are found: auto (default: "
                      "a self-join of each prefix the ideas reach most of, where that costs less than searching the rows "
                      "one by one, the rest searched), on-demand (every missing one searched) or self-join (a full "
                      "self-join of each cutoff's prefix, the reference); all give the same results")
        ->check(CLI::IsMember({"auto", "on-demand", "self-join"}));
    score->add_option("--evidence", a->evidence, "Nearest papers listed per idea (default 10)")
        ->check(CLI::NonNegativeNumber);
    add_device_flags(score, a->device);
    score->add_option("--out", a->out, "Output file (written as OUT.partial while running); default: a table on stdout");
    score->add_option("--format", a->format, "jsonl (default) or csv")->check(CLI::IsMember({"jsonl", "csv"}));
    score->add_flag("--resume", a->resume, "Continue an interrupted run: ideas already in OUT.partial are skipped");
    score->add_option("--threads", a->ideas.threads, "Worker threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    add_embedder_flags(*score, a->ideas.embedder);
    add_filter_flags(*score, a->ideas.filter);
    score->add_flag("-q,--quiet", a->ideas.quiet, "No progress on stderr");
    score->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_score(*a); }); });
}

}  // namespace novelty::cli
