#include "novelty_host/triage/triage.hpp"

#include "novelty/request/scope.hpp"

#include "novelty/util/error.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty_host/claimnov/claimnov_pipeline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace novelty::host {

namespace {

using nlohmann::ordered_json;

/// A representative's outcome, which its members inherit.
struct Outcome {
    std::optional<IdeaScore> score;
    std::string nearest_id;
    bool checked = false;
    std::optional<ProposalResult> claims;
    std::string error;  ///< what failed (scoring or ClaimNov), "" when nothing did
};

struct Run {
    const TriageContext& context;
    const TriageSettings& settings;
    const TriageInput& input;
    DedupResult clusters;
    PreparedClaims prepared;
    std::vector<char> active;
    std::vector<std::vector<std::size_t>> members;  ///< per cluster, ascending
    std::vector<Outcome> outcomes;                   ///< per cluster
    const std::function<void(const std::string&, const std::string&)>& on_record;
    TriageSummary summary;

    void progress(const std::string& stage, std::size_t done, std::size_t total) const {
        if (context.progress) context.progress(stage, done, total);
    }
};

double band_middle(const TriageSettings& s) { return (s.band_lo + s.band_hi) / 2; }

const char* gate_name(TriageGate gate) { return gate == TriageGate::rnd ? "rnd" : "nearest"; }

// The gate's value for a scored outcome: RND, or the nearest paper's similarity.
double gate_value(const TriageSettings& s, const Outcome& o) {
    if (s.gate == TriageGate::rnd) return o.score->rnd;
    return o.score->neighbor_sims.empty() ? -1.0 : o.score->neighbor_sims[0];
}

// The decision without ClaimNov: RND passes at or above the band's middle; a nearest paper at or
// above the middle fails the idea.
bool gate_passes(const TriageSettings& s, const Outcome& o) {
    const bool above = gate_value(s, o) >= band_middle(s);
    return s.gate == TriageGate::rnd ? above : !above;
}

ordered_json verdict_json(const Run& run, const Outcome& o) {
    if (o.claims && o.claims->error.empty()) {
        const ProposalResult& r = *o.claims;
        return {{"decision", r.verdict.fail ? "fail" : "pass"},
                {"source", r.verdict.source ? ordered_json(*r.verdict.source) : ordered_json(nullptr)},
                {"novelty", r.novelty.novelty},
                {"judge", r.verdict.judge}};
    }
    if (!o.score) return nullptr;
    const bool pass = gate_passes(run.settings, o);
    const bool names_source = !pass && run.settings.gate == TriageGate::nearest && !o.nearest_id.empty();
    return {{"decision", pass ? "pass" : "fail"},
            {"source", names_source ? ordered_json(o.nearest_id) : ordered_json(nullptr)},
            {"novelty", nullptr},
            {"judge", gate_name(run.settings.gate)}};
}

std::string decided_by(const TriageSettings& s, const Outcome& o) {
    if (o.claims && o.claims->error.empty()) return "claimnov";
    return o.score ? gate_name(s.gate) : "none";
}

std::string record_json(const Run& run, std::size_t idea, std::size_t cluster) {
    const Outcome& o = run.outcomes[cluster];
    const std::size_t rep = run.clusters.representative[cluster];
    const bool is_rep = idea == rep;
    ordered_json r;
    r["id"] = run.input.ideas[idea].proposal.id;
    r["line"] = run.input.ideas[idea].line;
    r["cluster"] = {{"index", cluster},
                    {"representative", run.input.ideas[rep].proposal.id},
                    {"size", run.members[cluster].size()},
                    {"sim", run.clusters.sim_to_representative[idea]}};
    r["role"] = !run.active[idea] ? "empty" : is_rep ? "representative" : "member";
    r["inherited"] = !is_rep;
    if (o.score)
        r["scores"] = {{"rnd", o.score->rnd},
                       {"nd", o.score->nd},
                       {"nearest", {{"id", o.nearest_id}, {"sim", o.score->neighbor_sims.empty() ? 0.0f : o.score->neighbor_sims[0]}}}};
    else
        r["scores"] = nullptr;
    r["checked"] = o.checked;
    r["decided_by"] = decided_by(run.settings, o);
    r["verdict"] = verdict_json(run, o);
    if (o.claims && o.claims->error.empty() && !o.claims->verdict.error.empty()) r["judge_error"] = o.claims->verdict.error;
    if (!o.error.empty()) r["error"] = o.error;
    return r.dump();
}

void emit_cluster(Run& run, std::size_t c) {
    for (std::size_t i : run.members[c]) {
        const std::string json = record_json(run, i, c);
        if (run.outcomes[c].error.size()) ++run.summary.errors;
        run.on_record(run.input.ideas[i].proposal.id, json);
    }
}

// Scores `reps` (cluster indices) with RND; a batch that fails is retried idea by idea so that
// one bad idea (a cutoff leaving too few papers) fails alone.
void score_representatives(Run& run, Scorer& scorer, const std::vector<std::size_t>& reps) {
    const std::size_t dim = run.input.dim, n_rows = run.context.corpus->size();
    constexpr std::size_t batch = 256;
    // As novelty score: an idea needs more than max(p, q) searchable papers (its cutoff, less its
    // exclusions); one that has fewer fails alone.
    std::vector<std::size_t> scorable;
    for (std::size_t c : reps) {
        const PipelineProposal& p = run.prepared.proposals[run.clusters.representative[c]];
        const ClaimsProposalInput& given = run.input.ideas[run.clusters.representative[c]].proposal;
        RecordScope scope;
        scope.row_limit = p.row_limit;
        scope.cutoff = given.date ? given.date->text() : run.input.cutoff_text;
        scope.excluded_rows = p.excluded_rows;
        const std::string problem = scope_reach_problem(scope, n_rows, run.settings.p, run.settings.q);
        if (problem.empty()) scorable.push_back(c);
        else run.outcomes[c].error = "rnd: " + problem;
    }
    const std::vector<std::size_t>& todo = scorable;
    auto score_some = [&](std::size_t begin, std::size_t end) {
        std::vector<float> vectors;
        ScoreInput in;
        in.dim = dim;
        for (std::size_t t = begin; t < end; ++t) {
            const std::size_t idea = run.clusters.representative[todo[t]];
            vectors.insert(vectors.end(), run.input.vectors.begin() + idea * dim, run.input.vectors.begin() + (idea + 1) * dim);
            in.row_limit.push_back(std::min(n_rows, run.prepared.proposals[idea].row_limit));
            in.excluded.add(run.prepared.proposals[idea].excluded_rows);
        }
        in.vectors = vectors.data();
        in.n_ideas = end - begin;
        const std::vector<IdeaScore> scores = scorer.score(in);
        for (std::size_t t = begin; t < end; ++t) {
            Outcome& o = run.outcomes[todo[t]];
            o.score = scores[t - begin];
            if (!o.score->neighbor_rows.empty())
                o.nearest_id = run.context.corpus->id_and_title(static_cast<std::size_t>(o.score->neighbor_rows[0])).first;
        }
    };
    for (std::size_t begin = 0; begin < todo.size(); begin += batch) {
        const std::size_t end = std::min(todo.size(), begin + batch);
        try {
            score_some(begin, end);
        } catch (const std::exception&) {
            for (std::size_t t = begin; t < end; ++t) {
                try {
                    score_some(t, t + 1);
                } catch (const std::exception& e) {
                    run.outcomes[todo[t]].error = std::string("rnd: ") + e.what();
                }
            }
        }
        run.progress("rnd", end, todo.size());
    }
}

// The clusters ClaimNov checks, in the selection's order, within the budget.
std::vector<std::size_t> select_for_claims(const Run& run, const std::vector<std::size_t>& scored) {
    const TriageSettings& s = run.settings;
    std::vector<std::size_t> picked;
    for (std::size_t c : scored) {
        const double value = gate_value(s, run.outcomes[c]);
        if (s.select != TriageSelect::band || (value >= s.band_lo && value <= s.band_hi)) picked.push_back(c);
    }
    auto key = [&](std::size_t c) {
        return s.select == TriageSelect::band ? std::abs(gate_value(s, run.outcomes[c]) - band_middle(s))
                                              : -run.outcomes[c].score->rnd;
    };
    if (s.select != TriageSelect::all)
        std::stable_sort(picked.begin(), picked.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    if (s.budget && picked.size() > *s.budget) picked.resize(*s.budget);
    return picked;
}

// ClaimNov on the picked clusters' representatives; each cluster is emitted as its result lands.
void check_with_claimnov(Run& run, const std::vector<std::size_t>& picked) {
    TriageContext const& ctx = run.context;
    PipelineOptions options;
    options.window = run.settings.window;
    options.params.rule_novelty_threshold = run.settings.rule_threshold;
    ClaimNovPipeline pipeline(ctx.stages->extractor(), ctx.stages->grader(), ctx.stages->judge(), *ctx.embedder, options);
    try {
        run.progress("pool claims", 0, run.prepared.pool.size());
        pipeline.prepare_pool(run.prepared.pool, *ctx.store,
                              [&](std::size_t done, std::size_t total) { run.progress("pool claims", done, total); });
    } catch (const std::exception& e) {
        for (std::size_t c : picked) {
            run.outcomes[c].error = std::string("claimnov: pool claims: ") + e.what();
            emit_cluster(run, c);
        }
        return;
    }
    std::vector<PipelineProposal> proposals;
    for (std::size_t c : picked) proposals.push_back(run.prepared.proposals[run.clusters.representative[c]]);
    std::vector<char> emitted(picked.size(), 0);
    std::size_t finished = 0;
    try {
        pipeline.run(proposals, [&](const ProposalResult& r) {
            const std::size_t c = picked[r.index];
            Outcome& o = run.outcomes[c];
            o.claims = r;
            o.checked = r.error.empty();
            if (!r.error.empty()) o.error = "claimnov: " + r.error;
            else ++run.summary.checked;
            emit_cluster(run, c);
            emitted[r.index] = 1;
            run.progress("claimnov", ++finished, picked.size());
        });
    } catch (const std::exception& e) {
        for (std::size_t t = 0; t < picked.size(); ++t)
            if (!emitted[t]) {
                run.outcomes[picked[t]].error = std::string("claimnov: ") + e.what();
                emit_cluster(run, picked[t]);
            }
    }
}

}  // namespace

TriageSelect parse_triage_select(const std::string& text) {
    if (text == "band") return TriageSelect::band;
    if (text == "top") return TriageSelect::top;
    if (text == "all") return TriageSelect::all;
    throw UsageError("--select must be band, top or all, not '" + text + "'");
}

TriageGate parse_triage_gate(const std::string& text) {
    if (text == "rnd") return TriageGate::rnd;
    if (text == "nearest") return TriageGate::nearest;
    throw UsageError("--gate must be rnd or nearest, not '" + text + "'");
}

std::pair<double, double> default_band(TriageGate gate) {
    return gate == TriageGate::rnd ? std::pair<double, double>{20, 60} : std::pair<double, double>{0.65, 0.95};
}

std::pair<double, double> parse_band(const std::string& text, TriageGate gate, const std::string& flag) {
    const auto comma = text.find(',');
    double lo = NAN, hi = NAN;
    try {
        std::size_t used_lo = 0, used_hi = 0;
        if (comma == std::string::npos) throw std::invalid_argument("no comma");
        lo = std::stod(text.substr(0, comma), &used_lo);
        hi = std::stod(text.substr(comma + 1), &used_hi);
        if (used_lo != comma || used_hi != text.size() - comma - 1) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
        throw UsageError(flag + " must be LO,HI (two numbers), not '" + text + "'");
    }
    const double min = gate == TriageGate::rnd ? 0 : -1, max = gate == TriageGate::rnd ? 100 : 1;
    if (!(lo >= min && hi <= max && lo <= hi))
        throw UsageError(flag + " " + text + ": needs " + (gate == TriageGate::rnd ? "0 <= LO <= HI <= 100 (RND)"
                                                                                   : "-1 <= LO <= HI <= 1 (a similarity)"));
    return {lo, hi};
}

TriageSummary run_triage(const TriageContext& context, const TriageSettings& settings, const TriageInput& input,
                         const std::set<std::string>& done,
                         const std::function<void(const std::string& id, const std::string& json)>& on_record) {
    if (!context.corpus || !context.backend || !context.stages || !context.embedder || !context.store)
        throw UsageError("triage: the context is incomplete");
    Run run{context, settings, input, {}, {}, {}, {}, {}, on_record, {}};
    const std::size_t n = input.ideas.size();
    run.summary.ideas = n;
    run.active.resize(n);
    for (std::size_t i = 0; i < n; ++i) run.active[i] = !input.ideas[i].proposal.title.empty() || !input.ideas[i].proposal.text.empty();
    run.progress("dedup", 0, 1);
    DedupOptions dedup;
    dedup.threshold = static_cast<float>(settings.threshold);
    dedup.representative = settings.representative;
    run.clusters = dedup_ideas(*context.backend, input.vectors.data(), n, input.dim, run.active, dedup);
    run.summary.dedup_rounds = run.clusters.extra_rounds;
    run.progress("dedup", 1, 1);
    const std::size_t n_clusters = run.clusters.representative.size();
    run.summary.clusters = n_clusters;
    run.members.resize(n_clusters);
    for (std::size_t i = 0; i < n; ++i) run.members[run.clusters.cluster[i]].push_back(i);
    run.outcomes.resize(n_clusters);

    std::vector<ClaimsProposalInput> proposals;
    for (const TriageIdea& idea : input.ideas) proposals.push_back(idea.proposal);
    run.prepared = prepare_claims(*context.corpus, proposals, input.cutoff, input.cutoff_text, input.exclude, std::nullopt);

    // Clusters still to do: none of their ids in `done`. Empty ideas are written at once.
    std::vector<std::size_t> to_score;
    for (std::size_t c = 0; c < n_clusters; ++c) {
        const std::size_t rep = run.clusters.representative[c];
        const bool all_done = std::all_of(run.members[c].begin(), run.members[c].end(),
                                          [&](std::size_t i) { return done.count(input.ideas[i].proposal.id) > 0; });
        if (all_done) {
            run.summary.resumed += run.members[c].size();
            continue;
        }
        if (!run.active[rep]) {
            ++run.summary.empty;
            emit_cluster(run, c);
        } else {
            to_score.push_back(c);
        }
    }
    run.summary.representatives = to_score.size();
    ScoreOptions score_options;
    score_options.p = settings.p;
    score_options.q = settings.q;
    score_options.write_cache = context.write_cache;
    const std::unique_ptr<SearchIndex> index = context.backend->build(VectorView::of(context.corpus->vectors()));
    Scorer scorer(*context.corpus, *index, score_options);
    score_representatives(run, scorer, to_score);

    std::vector<std::size_t> scored;
    for (std::size_t c : to_score)
        if (run.outcomes[c].score) scored.push_back(c);
        else emit_cluster(run, c);
    const std::vector<std::size_t> picked = select_for_claims(run, scored);
    std::vector<char> is_picked(n_clusters, 0);
    for (std::size_t c : picked) is_picked[c] = 1;
    for (std::size_t c : scored)
        if (!is_picked[c]) emit_cluster(run, c);
    if (!picked.empty()) check_with_claimnov(run, picked);
    return run.summary;
}

}  // namespace novelty::host
