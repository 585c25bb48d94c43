// novelty eval claimnov: the ClaimNov evaluation of a novelty check's verdicts (docs/claimnov.md):
// catch rate, named source, rejection after source removal, false alarms, J, Δ, dispute reject
// rates and hybrid pass-and-name, from `novelty claims` results and a labels file.
#include "cli_common.hpp"

#include "util/message_text.hpp"
#include "novelty/util/atomic_file.hpp"
#include "novelty/claimnov/claimnov_eval.hpp"
#include "novelty/util/error.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>

namespace novelty::cli {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

struct EvalClaimNovArgs {
    std::string results;
    std::string labels;
    bool json = false;
    std::string out;
};

/// Each JSON object of a JSON Lines file with its line number; blank lines skipped.
std::vector<std::pair<json, std::size_t>> read_objects(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "cannot open the file");
    std::vector<std::pair<json, std::size_t>> out;
    std::string line;
    for (std::size_t n = 1; std::getline(in, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        json record;
        try {
            record = parse_json(line);
        } catch (const JsonError& e) {
            throw InputError(path, n, std::string("malformed JSON: ") + e.what());
        }
        if (!record.is_object()) throw InputError(path, n, "expected a JSON object");
        out.emplace_back(std::move(record), n);
    }
    return out;
}

std::string id_of(const json& record, const std::string& path, std::size_t line) {
    const auto it = record.find("id");
    if (it != record.end() && it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
    if (it != record.end() && it->is_number_integer()) return std::to_string(it->get<long long>());
    throw InputError(path, line, "the record has no \"id\"");
}

std::string optional_string(const json& record, const char* key, const std::string& path, std::size_t line) {
    const auto it = record.find(key);
    if (it == record.end() || it->is_null()) return "";
    if (!it->is_string()) throw InputError(path, line, std::string("\"") + key + "\" must be a string or null");
    return it->get<std::string>();
}

ordered_json number_or_null(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

std::string percent(double v) {
    if (!std::isfinite(v)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
    return buf;
}

std::string signed2(double v) {
    if (!std::isfinite(v)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.2f", v);
    return buf;
}

/// The results file: verdicts by id, and the errors of records without one.
struct Results {
    struct Judged {
        bool rejected = false;
        std::string attributed;  ///< the verdict's source, else the record's attribution
    };
    std::map<std::string, Judged> judged;
    std::map<std::string, std::string> errors;  ///< id -> the error of a record without a verdict
};

Results read_results(const std::string& path) {
    Results out;
    for (const auto& [record, line] : read_objects(path)) {
        const std::string id = id_of(record, path, line);
        if (record.contains("error")) {
            const auto& e = record["error"];
            out.errors[id] = e.is_string() ? e.get<std::string>() : dump_json(e);
            continue;
        }
        const auto verdict = record.find("verdict");
        if (verdict == record.end() || !verdict->is_object())
            throw InputError(path, line, "record " + quote_value(id) + " has no \"verdict\" object");
        const std::string decision = optional_string(*verdict, "decision", path, line);
        if (decision != "pass" && decision != "fail")
            throw InputError(path, line, "record " + quote_value(id) + ": verdict.decision is " + quote_value(decision) +
                                             ", not pass or fail");
        Results::Judged j;
        j.rejected = decision == "fail";
        j.attributed = optional_string(*verdict, "source", path, line);
        if (j.attributed.empty()) j.attributed = optional_string(record, "attribution", path, line);
        out.judged[id] = j;
    }
    return out;
}

/// The labelled items joined to their verdicts, and the labelled ids left out of every rate.
struct Joined {
    std::vector<EvalItem> items;
    std::size_t labelled = 0, with_error = 0, without_result = 0;
    ordered_json left_out = ordered_json::array();  ///< {"id", "set", "reason", "error"}
};

Joined join_labels(const std::string& path, const Results& results) {
    Joined out;
    for (const auto& [record, line] : read_objects(path)) {
        const std::string id = id_of(record, path, line);
        EvalItem item;
        const std::string set = optional_string(record, "set", path, line);
        const auto parsed = parse_eval_set(set);
        if (!parsed)
            throw InputError(path, line, "\"set\" is '" + set +
                                             "'; expected disguised, source_out, later_realized, dispute or hybrid");
        item.set = *parsed;
        item.expected_paper = optional_string(record, "source", path, line);
        item.outcome = optional_string(record, "outcome", path, line);
        if (!item.outcome.empty() && item.outcome != "accepted" && item.outcome != "rejected")
            throw InputError(path, line, "\"outcome\" is '" + item.outcome + "'; expected accepted, rejected or null");
        ++out.labelled;
        const auto it = results.judged.find(id);
        if (it == results.judged.end()) {
            const auto error = results.errors.find(id);
            const bool has_error = error != results.errors.end();
            ++(has_error ? out.with_error : out.without_result);
            out.left_out.push_back({{"id", id},
                                    {"set", set},
                                    {"reason", has_error ? "error" : "no result"},
                                    {"error", has_error ? ordered_json(error->second) : ordered_json(nullptr)}});
            continue;
        }
        item.rejected = it->second.rejected;
        item.attributed_paper = it->second.attributed;
        out.items.push_back(std::move(item));
    }
    return out;
}

ordered_json metrics_json(const ClaimNovCounts& c, const ClaimNovMetrics& m) {
    ordered_json out;
    out["disguised"] = {{"n", c.disguised}, {"caught", c.caught}, {"named", c.named},
                        {"catch_rate", number_or_null(m.catch_rate)}, {"named_rate", number_or_null(m.named_rate)}};
    out["source_out"] = {{"n", c.source_out}, {"rejected", c.source_out_rejected}, {"rate", number_or_null(m.source_out_rate)}};
    out["later_realized"] = {{"n", c.later_realized}, {"false_alarms", c.false_alarms},
                             {"rate", number_or_null(m.false_alarm_rate)}};
    out["j"] = number_or_null(m.j);
    out["delta"] = number_or_null(m.delta);
    out["dispute"] = {{"n", c.dispute},
                      {"accepted", c.dispute_accepted},
                      {"reject_accepted", number_or_null(m.reject_accepted)},
                      {"rejected", c.dispute_rejected},
                      {"reject_rejected", number_or_null(m.reject_rejected)},
                      {"name_b", number_or_null(m.dispute_named_rate)},
                      {"name_b_on_pass", number_or_null(m.dispute_named_on_pass)}};
    out["hybrid"] = {{"n", c.hybrid}, {"passed", c.hybrid_passed}, {"named", c.hybrid_named},
                     {"pass_and_named", c.hybrid_pass_and_named}};
    return out;
}

void print_table(const ClaimNovCounts& c, const ClaimNovMetrics& m, const Joined& joined) {
    std::printf("%-34s %s\n", "set / metric", "value");
    if (c.disguised > 0) {
        std::printf("%-34s %zu / %zu (%s)\n", "disguised: caught", c.caught, c.disguised, percent(m.catch_rate).c_str());
        std::printf("%-34s %zu / %zu (%s)\n", "disguised: named source", c.named, c.disguised, percent(m.named_rate).c_str());
    }
    if (c.source_out > 0)
        std::printf("%-34s %zu / %zu (%s)\n", "source removed: rejected", c.source_out_rejected, c.source_out,
                    percent(m.source_out_rate).c_str());
    if (c.later_realized > 0)
        std::printf("%-34s %zu / %zu (%s)\n", "later-realized: false alarms", c.false_alarms, c.later_realized,
                    percent(m.false_alarm_rate).c_str());
    std::printf("%-34s %s\n", "J = catch - false alarm", signed2(m.j).c_str());
    std::printf("%-34s %s\n", "Delta = catch - source-out", signed2(m.delta).c_str());
    if (c.dispute > 0) {
        std::printf("%-34s %s of %zu\n", "dispute: reject accepted", percent(m.reject_accepted).c_str(), c.dispute_accepted);
        std::printf("%-34s %s of %zu\n", "dispute: reject rejected", percent(m.reject_rejected).c_str(), c.dispute_rejected);
        std::printf("%-34s %s (on pass %s)\n", "dispute: name B", percent(m.dispute_named_rate).c_str(),
                    percent(m.dispute_named_on_pass).c_str());
    }
    if (c.hybrid > 0)
        std::printf("%-34s pass %zu, name B %zu, pass and name %zu (of %zu)\n", "hybrid", c.hybrid_passed,
                    c.hybrid_named, c.hybrid_pass_and_named, c.hybrid);
    std::printf("%-34s %zu of %zu labelled (%zu with an error, %zu without a result)\n", "left out of every rate",
                joined.left_out.size(), joined.labelled, joined.with_error, joined.without_result);
    for (const auto& r : joined.left_out)
        std::printf("  %s (%s): %s\n", r["id"].get<std::string>().c_str(), r["set"].get<std::string>().c_str(),
                    r["error"].is_string() ? r["error"].get<std::string>().c_str() : "no result record");
}

int run_eval_claimnov(const EvalClaimNovArgs& a) {
    refuse_output_over_inputs("--out", a.out, {a.results, a.labels});
    const Results results = read_results(a.results);
    const Joined joined = join_labels(a.labels, results);
    if (joined.items.empty()) throw InputError(a.labels, 0, "no labelled id has a judged result in " + a.results);

    const ClaimNovCounts c = count_eval_items(joined.items);
    const ClaimNovMetrics m = claimnov_metrics(c);
    ordered_json out = metrics_json(c, m);
    out["missing_results"] = joined.without_result;
    out["unjudged_results"] = results.errors.size();
    out["labelled"] = joined.labelled;
    out["evaluated"] = joined.items.size();
    out["left_out"] = {{"n", joined.left_out.size()},
                       {"with_error", joined.with_error},
                       {"without_result", joined.without_result},
                       {"records", joined.left_out}};
    const std::string text = out.dump(2);
    if (!a.out.empty()) {
        AtomicFile file(a.out);
        file.write(text.data(), text.size());
        file.write("\n", 1);
        file.commit();
    }
    if (a.json) std::printf("%s\n", text.c_str());
    else print_table(c, m, joined);
    if (!joined.left_out.empty())
        std::fprintf(stderr, "novelty: warning: %s of %s left out of every rate: %s with an error result, %s without a result\n",
                     thousands(joined.left_out.size()).c_str(), count_of(joined.labelled, "labelled id").c_str(),
                     thousands(joined.with_error).c_str(), thousands(joined.without_result).c_str());
    if (results.errors.size() > joined.with_error)
        std::fprintf(stderr, "novelty: note: %s with an error are not labelled\n",
                     count_of(results.errors.size() - joined.with_error, "result").c_str());
    return exit_ok;
}

}  // namespace

void add_eval_claimnov_command(CLI::App& eval, int& exit_code) {
    auto a = std::make_shared<EvalClaimNovArgs>();
    CLI::App* cmd = eval.add_subcommand(
        "claimnov", "ClaimNov evaluation of pass/fail verdicts: catch rate, named source, rejection after source removal, "
                    "false alarms, J, Delta, dispute reject rates, hybrid pass-and-name");
    cmd->add_option("--results", a->results, "Verdicts: the JSON Lines written by 'novelty claims'")->required();
    cmd->add_option("--labels", a->labels,
                    "Labels: JSON Lines with \"id\", \"set\" (disguised, source_out, later_realized, dispute, hybrid), "
                    "\"source\" (the paper to name) and, for disputes, \"outcome\" (accepted or rejected)")
        ->required();
    cmd->add_flag("--json", a->json, "Print JSON instead of a table");
    cmd->add_option("--out", a->out, "Also write the JSON to this file (atomically)");
    cmd->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_eval_claimnov(*a); }); });
}

}  // namespace novelty::cli
