// novelty eval sweep: many novelty-score variants (P, Q, density definitions, HD's neighbours,
// relative HD, combinations) scored from one neighbour profile per idea, each evaluated against
// labels per group and mixed (AUROC, bootstrap intervals, KS between groups), and the winner
// chosen by cross-validation. docs/scoring.md ("The score sweep") and docs/cli.md.
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "eval_records.hpp"
#include "query_input.hpp"
#include "svg_plot.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"
#include "scoring/score_sweep.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace novelty::cli {

namespace {

using nlohmann::ordered_json;

struct SweepArgs {
    std::string corpus;
    QueryFlags ideas;
    std::string labels;
    std::string group_by = "field";
    std::string p = "10,20,50,100,200";
    std::string q = "5,10,20,50,100,200";
    std::string hd = "1,3,5,10,20,50";
    std::string densities = "cos,kth,euclid";
    std::string paired;
    SweepOptions options;
    std::size_t top = 15;
    std::size_t extra = 32;
    DeviceFlags device;
    bool json = false;
    std::string out;
    std::string plot;
};

/// `values` with `v` added, sorted ascending, without repeats.
std::vector<std::size_t> with_value(std::vector<std::size_t> values, std::size_t v) {
    values.push_back(v);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

/// The ideas that have a label, with their labels and groups, in idea-file order.
struct Labelled {
    std::vector<std::size_t> idea;  ///< index into the loaded ideas
    std::vector<int> labels;
    std::vector<std::string> groups;
};

Labelled match_labels(const QueryInput& input, const SweepArgs& args) {
    const auto labels = read_labels(args.labels, args.group_by);
    Labelled out;
    for (std::size_t i = 0; i < input.records.size(); ++i) {
        const auto it = labels.find(input.records[i].id);
        if (it == labels.end()) continue;
        out.idea.push_back(i);
        out.labels.push_back(it->second.label);
        out.groups.push_back(args.group_by.empty() ? "all-ideas" : it->second.group);
    }
    const std::size_t unlabelled = input.records.size() - out.idea.size(), unscored = labels.size() - out.idea.size();
    if (unlabelled > 0 || unscored > 0)
        std::fprintf(stderr, "novelty: note: %s without a label and %s without an idea; sweeping the %s in both\n",
                     count_of(unlabelled, "idea").c_str(), count_of(unscored, "label").c_str(),
                     count_of(out.idea.size(), "idea").c_str());
    if (out.idea.empty()) throw InputError(args.labels, 0, "no id is both here and in " + args.ideas.path);
    return out;
}

std::vector<NeighborProfile> compute_profiles(const Corpus& corpus, const QueryInput& input, const Labelled& lab,
                                              const SweepGrid& grid, const SweepArgs& args) {
    auto backend = make_search_backend(args.device, args.ideas.threads, args.ideas.quiet);
    std::vector<float> vectors;
    const ScoreInput batch = input.score_input(lab.idea, vectors);
    ProfileOptions options;
    options.k_idea = grid.k_idea();
    options.p = grid.max_p();
    options.k_neighbor = grid.k_neighbor();
    options.extra = args.extra;
    host::ProgressBar bar("densities", "blocks", args.ideas.quiet);
    options.on_join_progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
    options.on_cache_warning = [](const std::string& m) { std::fprintf(stderr, "novelty: warning: %s\n", m.c_str()); };
    ProfileStats stats;
    const std::unique_ptr<SearchIndex> index = backend->build(VectorView::of(corpus.vectors()));
    std::vector<NeighborProfile> profiles = neighbor_profiles(corpus, *index, batch, options, &stats);
    bar.finish();
    if (!args.ideas.quiet)
        std::fprintf(stderr, "novelty: %s of neighbours read from the corpus's self-join, %s searched directly\n",
                     thousands(stats.from_join).c_str(), thousands(stats.searched).c_str());
    return profiles;
}

std::string fmt(const char* format, double v) {
    if (std::isnan(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string auroc_cell(const GroupResult& g) {
    if (!g.auroc.value) return "-";
    std::string cell = fmt("%.3f", *g.auroc.value);
    if (g.ci) cell += " [" + fmt("%.3f", g.ci->lo) + "," + fmt("%.3f", g.ci->hi) + "]";
    return cell;
}

double group_value(const CandidateResult& r, std::size_t g) {
    return r.groups[g].auroc.value ? *r.groups[g].auroc.value : std::nan("");
}

std::size_t find_candidate(const std::vector<SweepCandidate>& c, const std::string& name) {
    for (std::size_t i = 0; i < c.size(); ++i)
        if (c[i].name == name) return i;
    return c.size();
}

/// The default rule of docs/scoring.md: above RND in every group and mixed, above HD mixed, KS < 0.1.
struct Verdict {
    bool beats_rnd_everywhere = false, beats_hd_mixed = false, ks_ok = false;
    bool all() const { return beats_rnd_everywhere && beats_hd_mixed && ks_ok; }
};

Verdict judge(const SweepReport& report, std::size_t winner, std::size_t rnd, std::size_t hd, std::size_t n_candidates) {
    Verdict v;
    if (rnd >= n_candidates || hd >= n_candidates) return v;
    const CandidateResult &w = report.results[winner], &r = report.results[rnd], &h = report.results[hd];
    v.beats_rnd_everywhere = true;
    for (std::size_t g = 0; g < w.groups.size(); ++g)
        v.beats_rnd_everywhere = v.beats_rnd_everywhere && group_value(w, g) > group_value(r, g);
    v.beats_hd_mixed = group_value(w, 0) > group_value(h, 0);
    v.ks_ok = !std::isnan(w.ks) && w.ks < 0.1;
    return v;
}

std::vector<std::size_t> rows_to_print(const std::vector<SweepCandidate>& c, const SweepReport& report,
                                       const std::vector<std::size_t>& baselines, std::size_t top) {
    std::vector<std::size_t> order(c.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double x = report.results[a].worst, y = report.results[b].worst;
        return (std::isnan(y) && !std::isnan(x)) || x > y;
    });
    std::vector<std::size_t> rows;
    auto listed = [&](std::size_t i) { return std::find(rows.begin(), rows.end(), i) != rows.end(); };
    for (std::size_t b : baselines)
        if (b < c.size() && !listed(b)) rows.push_back(b);
    if (!listed(report.winner)) rows.push_back(report.winner);
    for (std::size_t i = 0, shown = 0; i < order.size() && shown < top; ++i) {
        if (!listed(order[i])) rows.push_back(order[i]);
        ++shown;
    }
    return rows;
}

void print_table(const std::vector<SweepCandidate>& c, const SweepReport& report, const std::vector<std::size_t>& rows,
                 const Verdict& verdict, const SweepArgs& args, std::size_t n_ideas) {
    std::printf("%s ideas; %s variants; 95%% intervals from %s stratified bootstrap replicates (seed %llu); %zu folds\n",
                thousands(n_ideas).c_str(), thousands(c.size()).c_str(), thousands(args.options.bootstrap).c_str(),
                static_cast<unsigned long long>(args.options.seed), args.options.folds);
    std::printf("Baselines first, then the best %zu by worst AUROC over all and each group (* the winner)\n\n", args.top);
    int nw = 6;
    for (std::size_t i : rows) nw = std::max(nw, static_cast<int>(c[i].name.size()) + 2);
    std::printf("%-*s", nw, "method");
    for (const std::string& g : report.group_names) std::printf("  %-21s", ("AUROC " + g).c_str());
    std::printf("  %6s  %6s  %6s  %6s\n", "KS", "KS nov", "KS est", "worst");
    for (std::size_t i : rows) {
        const std::string name = (i == report.winner ? "* " : "  ") + c[i].name;
        std::printf("%-*s", nw, name.c_str());
        for (const GroupResult& g : report.results[i].groups) std::printf("  %-21s", auroc_cell(g).c_str());
        const CandidateResult& r = report.results[i];
        std::printf("  %6s  %6s  %6s  %6s\n", fmt("%.3f", r.ks).c_str(), fmt("%.3f", r.ks_novel).c_str(),
                    fmt("%.3f", r.ks_established).c_str(), fmt("%.3f", r.worst).c_str());
    }
    std::printf("\nWinner chosen on training folds only:\n");
    for (std::size_t f = 0; f < report.picks.size(); ++f) {
        const FoldPick& p = report.picks[f];
        std::printf("  fold %zu: %-34s train criterion %s, held-out AUROC %s (worst over groups %s)\n", f + 1,
                    c[p.candidate].name.c_str(), fmt("%.3f", p.train_criterion).c_str(), fmt("%.3f", p.test_all).c_str(),
                    fmt("%.3f", p.test_worst).c_str());
    }
    std::printf("Winner: %s. Above RND in every group and mixed: %s; above HD mixed: %s; KS < 0.1: %s. "
                "Default rule met: %s\n",
                c[report.winner].name.c_str(), verdict.beats_rnd_everywhere ? "yes" : "no",
                verdict.beats_hd_mixed ? "yes" : "no", verdict.ks_ok ? "yes" : "no", verdict.all() ? "yes" : "no");
}

std::string difference_cell(const std::optional<PairedDifference>& d) {
    if (!d) return "-";
    std::string cell = fmt("%+.3f", d->value);
    if (d->ci) cell += " [" + fmt("%+.3f", d->ci->lo) + "," + fmt("%+.3f", d->ci->hi) + "] p=" + fmt("%.3f", d->share_not_above);
    return cell;
}

void print_paired(const std::vector<PairedComparison>& paired) {
    if (paired.empty()) return;
    std::printf("\nPaired differences AUROC(a) - AUROC(b) [95%% paired bootstrap interval] p = share of replicates <= 0:\n");
    for (const PairedComparison& cmp : paired) {
        std::printf("  %s - %s\n", cmp.a.c_str(), cmp.b.c_str());
        for (std::size_t g = 0; g < cmp.groups.size(); ++g)
            std::printf("    %-8s %s\n", cmp.groups[g].c_str(), difference_cell(cmp.result[g]).c_str());
    }
}

ordered_json number_or_null(double v) { return std::isnan(v) ? ordered_json(nullptr) : ordered_json(v); }

ordered_json paired_json(const std::vector<PairedComparison>& paired) {
    ordered_json pairs = ordered_json::array();
    for (const PairedComparison& cmp : paired) {
        ordered_json groups = ordered_json::object();
        for (std::size_t g = 0; g < cmp.groups.size(); ++g) {
            const auto& d = cmp.result[g];
            groups[cmp.groups[g]] =
                d ? ordered_json{{"difference", d->value},
                                 {"ci95", d->ci ? ordered_json::array({d->ci->lo, d->ci->hi}) : ordered_json(nullptr)},
                                 {"share_not_above", number_or_null(d->share_not_above)},
                                 {"n_pos", d->n_pos},
                                 {"n_neg", d->n_neg},
                                 {"n_missing", d->n_missing}}
                  : ordered_json(nullptr);
        }
        pairs.push_back({{"a", cmp.a}, {"b", cmp.b}, {"groups", groups}});
    }
    return pairs;
}

ordered_json to_json(const std::vector<SweepCandidate>& c, const SweepReport& report, const Verdict& verdict,
                     const std::vector<PairedComparison>& paired, const SweepArgs& args, std::size_t n_ideas) {
    ordered_json out;
    out["n_ideas"] = n_ideas;
    out["groups"] = report.group_names;
    out["bootstrap"] = {{"replicates", args.options.bootstrap}, {"seed", args.options.seed}, {"level", 0.95}};
    out["folds"] = args.options.folds;
    out["max_ks"] = args.options.max_ks;
    ordered_json variants = ordered_json::array();
    for (std::size_t i = 0; i < c.size(); ++i) {
        const CandidateResult& r = report.results[i];
        ordered_json v{{"name", c[i].name}, {"family", c[i].family}, {"selectable", c[i].selectable}};
        ordered_json groups = ordered_json::object();
        for (const GroupResult& g : r.groups)
            groups[g.group] = {{"auroc", g.auroc.value ? ordered_json(*g.auroc.value) : ordered_json(nullptr)},
                               {"ci95", g.ci ? ordered_json::array({g.ci->lo, g.ci->hi}) : ordered_json(nullptr)},
                               {"n_pos", g.auroc.n_pos},
                               {"n_neg", g.auroc.n_neg},
                               {"n_missing", g.auroc.n_missing}};
        v["groups"] = groups;
        v["ks"] = number_or_null(r.ks);
        v["ks_novel"] = number_or_null(r.ks_novel);
        v["ks_established"] = number_or_null(r.ks_established);
        v["worst"] = number_or_null(r.worst);
        variants.push_back(v);
    }
    out["variants"] = variants;
    ordered_json picks = ordered_json::array();
    for (const FoldPick& p : report.picks)
        picks.push_back({{"pick", c[p.candidate].name},
                         {"train_criterion", number_or_null(p.train_criterion)},
                         {"test_auroc_all", number_or_null(p.test_all)},
                         {"test_worst", number_or_null(p.test_worst)}});
    out["fold_picks"] = picks;
    out["winner"] = c[report.winner].name;
    out["default_rule"] = {{"beats_rnd_in_every_group_and_mixed", verdict.beats_rnd_everywhere},
                           {"beats_hd_mixed", verdict.beats_hd_mixed},
                           {"ks_below_0.1", verdict.ks_ok},
                           {"met", verdict.all()}};
    out["paired"] = paired_json(paired);
    if (report.logistic_full) {
        const LogisticModel& m = *report.logistic_full;
        out["logistic_full"] = {{"features", args.options.logistic_features}, {"mean", m.mean}, {"sd", m.sd},
                                {"weights", m.weights}, {"bias", m.bias}};
    }
    return out;
}

/// Fails before the slow part when a --paired name is not one the grid gives.
void check_pair_names(const std::vector<std::pair<std::string, std::string>>& pairs, const SweepGrid& grid,
                      const SweepOptions& options) {
    std::vector<SweepCandidate> named = sweep_candidates({}, grid);
    named.push_back({"logistic[" + std::to_string(options.logistic_features.size()) + " features]", "logistic", {}, false});
    for (const auto& [a, b] : pairs) paired_comparisons(named, {}, {}, {{a, b}}, options);
}

std::string plot(const std::vector<SweepCandidate>& c, const SweepReport& report, const Labelled& lab,
                 const std::vector<std::size_t>& shown) {
    std::vector<BoxPanel> panels;
    for (std::size_t i : shown) {
        BoxPanel panel{c[i].name, "score (higher = more novel)", {}};
        panel.series.push_back({"all", c[i].scores, "AUROC " + fmt("%.3f", group_value(report.results[i], 0))});
        for (std::size_t g = 1; g < report.group_names.size(); ++g)
            for (int label : {1, 0}) {
                std::vector<double> values;
                for (std::size_t t = 0; t < lab.labels.size(); ++t)
                    if (lab.groups[t] == report.group_names[g] && lab.labels[t] == label) values.push_back(c[i].scores[t]);
                panel.series.push_back({report.group_names[g] + (label ? " novel" : " not novel"), values,
                                        label ? "AUROC " + fmt("%.3f", group_value(report.results[i], g)) : ""});
            }
        panels.push_back(std::move(panel));
    }
    return box_plot_svg("Novelty score variants by group and label",
                        "KS between groups: the score's shift from one field to the next; box: quartiles, whiskers 1.5 IQR",
                        panels);
}

void write_atomically(const std::string& path, const std::string& text) {
    AtomicFile file(path);
    file.write(text.data(), text.size());
    file.commit();
}

int run_sweep(SweepArgs args) {
    SweepGrid grid;
    // The defaults of `novelty score` (P 100, Q 50, HD over 5) are always swept: they are the
    // baselines every variant is compared with.
    grid.p = with_value(parse_counts(args.p, "--p", SearchBackend::max_k), grid.base_p);
    grid.q = with_value(parse_counts(args.q, "--q", SearchBackend::max_k), grid.base_q);
    grid.hd = with_value(parse_counts(args.hd, "--hd", SearchBackend::max_k), grid.base_hd);
    grid.kinds.clear();
    for (const std::string& k : split_ids(args.densities)) grid.kinds.push_back(parse_density_kind(k));
    if (grid.kinds.empty()) throw UsageError("--densities needs at least one of cos, kth, euclid");
    const auto pairs = parse_variant_pairs(args.paired);
    check_pair_names(pairs, grid, args.options);  // before the slow part
    const Corpus corpus = Corpus::open(args.corpus);
    const QueryInput input = load_queries(corpus, args.ideas, "ideas");
    const Labelled lab = match_labels(input, args);
    const std::vector<NeighborProfile> profiles = compute_profiles(corpus, input, lab, grid, args);
    std::vector<SweepCandidate> candidates = sweep_candidates(profiles, grid);
    const SweepReport report = evaluate_sweep(candidates, lab.labels, lab.groups, args.options);
    const std::vector<PairedComparison> paired =
        paired_comparisons(candidates, lab.labels, lab.groups, pairs, args.options);

    const std::string base = "P=" + std::to_string(grid.base_p);
    const std::size_t rnd = find_candidate(candidates, "rnd[cos," + base + ",Q=" + std::to_string(grid.base_q) + "]");
    const std::size_t hd = find_candidate(candidates, "hd[n=" + std::to_string(grid.base_hd) + "]");
    const Verdict verdict = judge(report, report.winner, rnd, hd, candidates.size());
    const std::vector<std::size_t> baselines{
        rnd, hd, find_candidate(candidates, "density[cos,Q=" + std::to_string(grid.base_q) + "]"),
        find_candidate(candidates, "density_p[" + base + "]"),
        find_candidate(candidates, "rnd[euclid," + base + ",Q=" + std::to_string(grid.base_q) + "]"),
        find_candidate(candidates, "rank_avg[rnd,hd]"), candidates.size() - 1};
    const std::vector<std::size_t> rows = rows_to_print(candidates, report, baselines, args.top);
    const ordered_json result = to_json(candidates, report, verdict, paired, args, lab.idea.size());
    if (args.json) std::printf("%s\n", result.dump(2).c_str());
    else {
        print_table(candidates, report, rows, verdict, args, lab.idea.size());
        print_paired(paired);
    }
    if (!args.out.empty()) {
        write_atomically(args.out, result.dump(2) + "\n");
        std::fprintf(stderr, "novelty: wrote the sweep to %s\n", args.out.c_str());
    }
    if (!args.plot.empty()) {
        std::vector<std::size_t> shown;
        for (std::size_t i : {rnd, hd, report.winner, candidates.size() - 1})
            if (i < candidates.size() && std::find(shown.begin(), shown.end(), i) == shown.end()) shown.push_back(i);
        write_atomically(args.plot, plot(candidates, report, lab, shown));
        std::fprintf(stderr, "novelty: wrote the plot to %s\n", args.plot.c_str());
    }
    return exit_ok;
}

}  // namespace

void add_eval_sweep_command(CLI::App& eval, int& exit_code) {
    auto a = std::make_shared<SweepArgs>();
    CLI::App* cmd = eval.add_subcommand(
        "sweep", "AUROC (with bootstrap intervals) per group and mixed, and the KS statistic between groups, of many "
                 "novelty-score variants: P, Q, density definitions, HD's neighbours, relative HD and combinations; the "
                 "winner chosen by cross-validation");
    cmd->add_option("--corpus", a->corpus, "Corpus directory (with vectors)")->required();
    cmd->add_option("--ideas", a->ideas.path, "Ideas, as for 'novelty score' (.jsonl with dates and exclusions, or .npy)")
        ->required();
    cmd->add_option("--vectors", a->ideas.vectors, "N x D .npy with the vector of each idea (row i = line i)");
    cmd->add_option("--labels", a->labels, "Labels: JSON Lines with \"id\", \"label\" and the group key")->required();
    cmd->add_option("--group-by", a->group_by, "Key of the label records that names each idea's field (default field; "
                                               "empty for none)");
    cmd->add_option("--p", a->p, "P values, comma-separated (default 10,20,50,100,200)");
    cmd->add_option("--q", a->q, "Q values (default 5,10,20,50,100,200)");
    cmd->add_option("--hd", a->hd, "HD neighbour counts (default 1,3,5,10,20,50)");
    cmd->add_option("--densities", a->densities, "Density definitions: cos, kth, euclid (default all)");
    cmd->add_option("--bootstrap", a->options.bootstrap, "Bootstrap replicates for the 95% intervals (default 200)")
        ->check(CLI::Range(std::size_t{0}, std::size_t{100000}));
    cmd->add_option("--paired", a->paired,
                    "Pairs A:B of variant names (comma-separated; names as printed): AUROC(A) - AUROC(B) over all "
                    "ideas and per group, with paired bootstrap intervals");
    cmd->add_option("--seed", a->options.seed, "Seed of the bootstrap and of the folds (default 1)");
    cmd->add_option("--folds", a->options.folds, "Cross-validation folds (default 5)")
        ->check(CLI::Range(std::size_t{2}, std::size_t{50}));
    cmd->add_option("--max-ks", a->options.max_ks,
                    "Variants whose KS between groups exceeds this on the training folds rank last (default 0.1)");
    cmd->add_option("--top", a->top, "Variants listed beyond the baselines (default 15)");
    cmd->add_option("--extra", a->extra, "Neighbours cached per paper beyond the largest Q (default 32)");
    cmd->add_option("--cutoff", a->ideas.cutoff, "Only papers published on or before this date, for ideas without one");
    cmd->add_option("--exclude", a->ideas.exclude, "Comma-separated paper ids left out for every idea");
    add_device_flags(cmd, a->device);
    cmd->add_option("--threads", a->ideas.threads, "Worker threads (default: all cores)");
    cmd->add_flag("--json", a->json, "Print JSON instead of a table");
    cmd->add_option("--out", a->out, "Also write the JSON to this file (atomically)");
    cmd->add_option("--plot", a->plot, "Write an SVG of the score distributions of RND, HD, the winner and the logistic "
                                       "combination, per group and label");
    cmd->add_flag("-q,--quiet", a->ideas.quiet, "No progress on stderr");
    cmd->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_sweep(*a); }); });
}

}  // namespace novelty::cli
