// novelty eval: evaluating novelty scores against labels. `eval auroc`: AUROC per method and group
// with stratified bootstrap intervals, score distributions, and an SVG plot of them.
#include "cli_common.hpp"
#include "eval_records.hpp"
#include "svg_plot.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"
#include "novelty/scoring/metrics.hpp"

#include "io/json/json_parse.hpp"
#include "util/message_text.hpp"
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

namespace novelty::cli {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr double missing_score = std::numeric_limits<double>::quiet_NaN();

struct AurocArgs {
    std::string scores;
    std::string labels;
    std::string group_by;
    std::string methods = "rnd,hd,on,density";
    std::size_t bootstrap = 1000;
    std::uint64_t seed = 1;
    bool json = false;
    std::string out;
    std::string plot;
};

std::vector<std::string> parse_methods(const std::string& list) {
    std::vector<std::string> methods;
    std::stringstream ss(list);
    std::string name;
    while (std::getline(ss, name, ',')) {
        const auto begin = name.find_first_not_of(" \t"), end = name.find_last_not_of(" \t");
        if (begin == std::string::npos) continue;
        name = name.substr(begin, end - begin + 1);
        for (const auto& seen : methods)
            if (seen == name) throw UsageError("--methods names \"" + name + "\" twice");
        methods.push_back(name);
    }
    if (methods.empty()) throw UsageError("--methods needs at least one method, e.g. rnd,hd,on,density");
    return methods;
}

struct ScoreFile {
    std::vector<std::string> ids;                         ///< in file order
    std::unordered_map<std::string, std::size_t> lines;   ///< id -> line
    std::vector<std::vector<double>> scores;              ///< per idea, per method; NaN for null
};

ScoreFile read_scores(const std::string& path, const std::vector<std::string>& methods) {
    ScoreFile file;
    std::vector<bool> method_seen(methods.size(), false);
    for_each_record(path, [&](const json& record, std::size_t line) {
        std::string id = record_id(record, path, line);
        claim_id(file.lines, id, path, line);
        const auto scores = record.find("scores");
        if (scores == record.end() || !scores->is_object())
            throw InputError(path, line, scores == record.end() ? "no \"scores\" object"
                                                                : "\"scores\" is " + json_type_words(*scores) + "; expected an object");
        std::vector<double> row(methods.size(), missing_score);
        for (std::size_t m = 0; m < methods.size(); ++m) {
            const auto value = scores->find(methods[m]);
            if (value == scores->end()) continue;
            method_seen[m] = true;
            if (value->is_null()) continue;
            if (!value->is_number())
                throw InputError(path, line, "\"scores\".\"" + methods[m] + "\" is " + json_type_words(*value) +
                                                 "; expected a number or null");
            row[m] = value->get<double>();
        }
        file.ids.push_back(std::move(id));
        file.scores.push_back(std::move(row));
    });
    for (std::size_t m = 0; m < methods.size(); ++m)
        if (!method_seen[m] && !file.ids.empty())
            throw UsageError("no record of " + path + " has a \"" + methods[m] + "\" score (see --methods)");
    return file;
}

struct MethodResult {
    Auroc auroc;
    std::optional<Interval> ci;
    Distribution distribution;
};

struct GroupResult {
    std::string name;
    std::vector<int> labels;
    std::vector<std::vector<double>> scores;  ///< per method, per idea of the group
    std::vector<MethodResult> methods;
};

struct Evaluation {
    std::vector<std::string> methods;
    std::vector<GroupResult> groups;  ///< "all" first, then groups by name
    std::size_t n_scored = 0, n_labelled = 0, n_matched = 0;
};

Evaluation evaluate(const AurocArgs& args) {
    Evaluation eval;
    eval.methods = parse_methods(args.methods);
    const ScoreFile scores = read_scores(args.scores, eval.methods);
    const auto labels = read_labels(args.labels, args.group_by);
    eval.n_scored = scores.ids.size();
    eval.n_labelled = labels.size();

    const std::size_t n_methods = eval.methods.size();
    std::map<std::string, GroupResult> by_group;
    GroupResult overall;
    overall.name = overall_group;
    overall.scores.resize(n_methods);
    for (std::size_t i = 0; i < scores.ids.size(); ++i) {
        const auto it = labels.find(scores.ids[i]);
        if (it == labels.end()) continue;
        ++eval.n_matched;
        std::vector<GroupResult*> targets{&overall};
        if (!args.group_by.empty()) {
            GroupResult& group = by_group[it->second.group];
            if (group.scores.empty()) {
                group.name = it->second.group;
                group.scores.resize(n_methods);
            }
            targets.push_back(&group);
        }
        for (GroupResult* g : targets) {
            g->labels.push_back(it->second.label);
            for (std::size_t m = 0; m < n_methods; ++m) g->scores[m].push_back(scores.scores[i][m]);
        }
    }
    const std::size_t n_unlabelled = eval.n_scored - eval.n_matched, n_unscored = eval.n_labelled - eval.n_matched;
    if (n_unlabelled > 0 || n_unscored > 0)
        std::fprintf(stderr, "novelty: note: %s in %s %s no label and %s in %s %s no score; evaluating the %s in both\n",
                     count_of(n_unlabelled, "idea").c_str(), args.scores.c_str(), n_unlabelled == 1 ? "has" : "have",
                     count_of(n_unscored, "idea").c_str(), args.labels.c_str(), n_unscored == 1 ? "has" : "have",
                     count_of(eval.n_matched, "idea").c_str());
    if (eval.n_matched == 0)
        throw InputError(args.labels, 0, "no id is both here and in " + args.scores + "; nothing to evaluate");

    eval.groups.push_back(std::move(overall));
    for (auto& [name, group] : by_group) eval.groups.push_back(std::move(group));
    for (GroupResult& g : eval.groups)
        for (std::size_t m = 0; m < n_methods; ++m) {
            MethodResult r;
            r.auroc = auroc(g.scores[m], g.labels);
            r.ci = bootstrap_auroc_ci(g.scores[m], g.labels, args.bootstrap, args.seed);
            r.distribution = summarize(g.scores[m]);
            g.methods.push_back(r);
        }
    return eval;
}

ordered_json number_or_null(double v) { return std::isnan(v) ? ordered_json(nullptr) : ordered_json(v); }

ordered_json to_json(const Evaluation& eval, const AurocArgs& args) {
    ordered_json out;
    ordered_json auroc_json = ordered_json::object(), dist_json = ordered_json::object();
    for (const GroupResult& g : eval.groups) {
        ordered_json a = ordered_json::object(), d = ordered_json::object();
        for (std::size_t m = 0; m < eval.methods.size(); ++m) {
            const MethodResult& r = g.methods[m];
            ordered_json entry;
            entry["value"] = r.auroc.value ? ordered_json(*r.auroc.value) : ordered_json(nullptr);
            entry["ci95"] = r.ci ? ordered_json::array({r.ci->lo, r.ci->hi}) : ordered_json(nullptr);
            entry["n_pos"] = r.auroc.n_pos;
            entry["n_neg"] = r.auroc.n_neg;
            entry["n"] = r.auroc.n_pos + r.auroc.n_neg;
            entry["n_missing"] = r.auroc.n_missing;
            if (!r.auroc.value) entry["reason"] = r.auroc.reason;
            a[eval.methods[m]] = entry;
            const Distribution& s = r.distribution;
            d[eval.methods[m]] = {{"n", s.n},
                                  {"n_missing", s.n_missing},
                                  {"mean", number_or_null(s.mean)},
                                  {"sd", number_or_null(s.sd)},
                                  {"min", number_or_null(s.min)},
                                  {"q1", number_or_null(s.q1)},
                                  {"median", number_or_null(s.median)},
                                  {"q3", number_or_null(s.q3)},
                                  {"max", number_or_null(s.max)}};
        }
        auroc_json[g.name] = a;
        dist_json[g.name] = d;
    }
    out["auroc"] = auroc_json;
    out["distribution"] = dist_json;
    out["n_scored"] = eval.n_scored;
    out["n_labelled"] = eval.n_labelled;
    out["n_matched"] = eval.n_matched;
    out["group_by"] = args.group_by.empty() ? ordered_json(nullptr) : ordered_json(args.group_by);
    out["methods"] = eval.methods;
    out["bootstrap"] = {{"replicates", args.bootstrap}, {"seed", args.seed}, {"stratified", true}, {"level", 0.95}};
    return out;
}

std::string fmt(const char* format, double v) {
    if (std::isnan(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

void print_table(const Evaluation& eval, const AurocArgs& args) {
    int gw = 5, mw = 6;
    for (const auto& g : eval.groups) gw = std::max(gw, static_cast<int>(g.name.size()));
    for (const auto& m : eval.methods) mw = std::max(mw, static_cast<int>(m.size()));
    std::printf("%s ideas matched (%s scored, %s labelled)", thousands(eval.n_matched).c_str(),
                thousands(eval.n_scored).c_str(), thousands(eval.n_labelled).c_str());
    if (args.bootstrap > 0)
        std::printf("; 95%% intervals from %s stratified bootstrap replicates, seed %llu\n",
                    thousands(args.bootstrap).c_str(), static_cast<unsigned long long>(args.seed));
    else
        std::printf("; no bootstrap intervals\n");
    std::printf("\nAUROC (higher score = more novel; ties count 1/2)\n");
    std::printf("%-*s  %-*s  %6s  %-16s  %6s  %6s  %8s\n", gw, "group", mw, "method", "AUROC", "95% CI", "pos", "neg",
                "no score");
    for (const auto& g : eval.groups)
        for (std::size_t m = 0; m < eval.methods.size(); ++m) {
            const MethodResult& r = g.methods[m];
            std::string value = r.auroc.value ? fmt("%.3f", *r.auroc.value) : "-";
            std::string ci = r.ci ? "[" + fmt("%.3f", r.ci->lo) + ", " + fmt("%.3f", r.ci->hi) + "]" : "-";
            std::string reason = r.auroc.value ? "" : "  (" + r.auroc.reason + ")";
            std::printf("%-*s  %-*s  %6s  %-16s  %6zu  %6zu  %8zu%s\n", gw, g.name.c_str(), mw, eval.methods[m].c_str(),
                        value.c_str(), ci.c_str(), r.auroc.n_pos, r.auroc.n_neg, r.auroc.n_missing, reason.c_str());
        }
    std::printf("\nScore distributions\n");
    std::printf("%-*s  %-*s  %6s  %9s  %9s  %9s  %9s  %9s  %9s  %9s\n", gw, "group", mw, "method", "n", "mean", "sd",
                "min", "q1", "median", "q3", "max");
    for (const auto& g : eval.groups)
        for (std::size_t m = 0; m < eval.methods.size(); ++m) {
            const Distribution& s = g.methods[m].distribution;
            std::printf("%-*s  %-*s  %6zu  %9s  %9s  %9s  %9s  %9s  %9s  %9s\n", gw, g.name.c_str(), mw,
                        eval.methods[m].c_str(), s.n, fmt("%.4g", s.mean).c_str(), fmt("%.4g", s.sd).c_str(),
                        fmt("%.4g", s.min).c_str(), fmt("%.4g", s.q1).c_str(), fmt("%.4g", s.median).c_str(),
                        fmt("%.4g", s.q3).c_str(), fmt("%.4g", s.max).c_str());
        }
}

std::string axis_label(const std::string& method) {
    if (method == "rnd") return "RND score (0-100; higher = more novel)";
    if (method == "hd") return "HD: mean Euclidean distance to the 5 nearest papers";
    if (method == "on") return "ON = HD x CI / CD";
    if (method == "density") return "density: mean cosine distance to the neighbours";
    return method + " score";
}

std::string method_title(const std::string& method) {
    if (method == "rnd") return "RND";
    if (method == "hd") return "HD";
    if (method == "on") return "ON";
    if (method == "density") return "Absolute density";
    return method;
}

std::string plot_svg(const Evaluation& eval, const AurocArgs& args) {
    std::vector<BoxPanel> panels;
    for (std::size_t m = 0; m < eval.methods.size(); ++m) {
        BoxPanel panel;
        panel.title = method_title(eval.methods[m]);
        panel.axis_label = axis_label(eval.methods[m]);
        for (const GroupResult& g : eval.groups) {
            const MethodResult& r = g.methods[m];
            panel.series.push_back({g.name, g.scores[m],
                                    r.auroc.value ? "AUROC " + fmt("%.3f", *r.auroc.value) : "AUROC n/a"});
        }
        panels.push_back(std::move(panel));
    }
    const std::string title =
        args.group_by.empty() ? "Novelty score distributions" : "Novelty score distributions by " + args.group_by;
    const std::string subtitle = count_of(eval.n_matched, "idea") +
                                 "; box: quartiles and median; whiskers: 1.5 IQR; dots: ideas; AUROC against the labels";
    return box_plot_svg(title, subtitle, panels);
}

void write_atomically(const std::string& path, const std::string& text) {
    AtomicFile file(path);
    file.write(text.data(), text.size());
    file.commit();
}

int run_auroc(const AurocArgs& args) {
    refuse_output_over_inputs("--out", args.out, {args.scores, args.labels});
    refuse_output_over_inputs("--plot", args.plot, {args.scores, args.labels, args.out});
    const Evaluation eval = evaluate(args);
    const ordered_json result = to_json(eval, args);
    if (args.json) std::printf("%s\n", result.dump(2).c_str());
    else print_table(eval, args);
    if (!args.out.empty()) {
        write_atomically(args.out, result.dump(2) + "\n");
        std::fprintf(stderr, "novelty: wrote the evaluation to %s\n", args.out.c_str());
    }
    if (!args.plot.empty()) {
        write_atomically(args.plot, plot_svg(eval, args));
        std::fprintf(stderr, "novelty: wrote the plot to %s\n", args.plot.c_str());
    }
    return exit_ok;
}

}  // namespace

void add_eval_commands(CLI::App& app, int& exit_code) {
    CLI::App* eval = app.add_subcommand("eval", "Evaluate novelty scores against labels");
    eval->require_subcommand(1);

    auto args = std::make_shared<AurocArgs>();
    CLI::App* auroc_cmd = eval->add_subcommand(
        "auroc", "AUROC of each scoring method against novel/not-novel labels, per group and over all, with "
                 "stratified bootstrap intervals and score distributions");
    auroc_cmd->add_option("--scores", args->scores, "Scores: the JSON Lines written by 'novelty score'")->required();
    auroc_cmd->add_option("--labels", args->labels,
                          "Labels: JSON Lines with an \"id\" and a \"label\" (1 or true = novel, 0 or false = not)")
        ->required();
    auroc_cmd->add_option("--group-by", args->group_by,
                          "A key of the label records (e.g. field): AUROC and distributions per value, and over all");
    auroc_cmd->add_option("--methods", args->methods, "Comma-separated keys of \"scores\" (default rnd,hd,on,density)");
    auroc_cmd->add_option("--bootstrap", args->bootstrap,
                          "Bootstrap replicates for the 95% intervals; 0 for none (default 1000)")
        ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
    auroc_cmd->add_option("--seed", args->seed, "Seed of the bootstrap (default 1)");
    auroc_cmd->add_flag("--json", args->json, "Print JSON instead of a table");
    auroc_cmd->add_option("--out", args->out, "Also write the JSON to this file (atomically)");
    auroc_cmd->add_option("--plot", args->plot, "Write an SVG of the score distributions per method and group");
    auroc_cmd->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_auroc(*args); }); });
    add_eval_retrieval_command(*eval, exit_code);
    add_eval_claimnov_command(*eval, exit_code);
    add_eval_sweep_command(*eval, exit_code);
}

}  // namespace novelty::cli
