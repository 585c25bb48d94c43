#include "novelty_host/claimnov/claimnov_pipeline.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace novelty::host {

namespace {

constexpr std::size_t max_reported_failures = 5;

enum class Stage { extracting, extracted, grading, graded, judging, judged };

struct ProposalState {
    Stage stage = Stage::extracting;
    Extraction extraction;
    ProposalResult result;
    std::size_t pending_grades = 0;
};

/// A pool claim: its paper and text.
struct PoolClaim {
    std::size_t paper = 0;  ///< index into the pool papers
    Claim claim;
};

}  // namespace

struct ClaimNovPipeline::Impl {
    ClaimExtractor& extractor;
    EntailmentGrader& grader;
    VerdictJudge& judge;
    Embedder& embedder;
    PipelineOptions options;

    std::vector<PoolPaper> papers;
    std::unordered_map<std::size_t, std::size_t> paper_of_row;  // corpus row -> index into papers
    std::vector<PoolClaim> pool_claims;
    std::unique_ptr<ClaimIndex> index;

    // Shared with stage callbacks.
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::size_t> ready;   // proposals whose stage changed
    std::size_t outstanding = 0;     // async calls whose callback has not run yet

    Impl(ClaimExtractor& e, EntailmentGrader& g, VerdictJudge& j, Embedder& em, PipelineOptions o)
        : extractor(e), grader(g), judge(j), embedder(em), options(std::move(o)) {}

    /// Registers an async call; the returned function must be called when its callback ran.
    void begin_call() {
        std::lock_guard lock(mutex);
        ++outstanding;
    }
    void end_call(std::size_t proposal, bool changed) {
        {
            std::lock_guard lock(mutex);
            --outstanding;
            if (changed) ready.push_back(proposal);
        }
        cv.notify_all();
    }

    void wait_for_outstanding() {
        std::unique_lock lock(mutex);
        cv.wait(lock, [this] { return outstanding == 0; });
    }

    /// Embeds texts, normalised rows.
    std::vector<float> embed(const std::vector<std::string>& texts) {
        if (texts.empty()) return {};
        return embedder.embed(texts);
    }

    /// A retrieved pool claim as a candidate (not graded yet).
    CandidateResult candidate_of(const ClaimHit& hit) const {
        const PoolClaim& pc = pool_claims[hit.claim];
        const PoolPaper& paper = papers[pc.paper];
        CandidateResult cand;
        cand.paper = paper.id;
        cand.paper_row = paper.row;
        cand.title = paper.title;
        cand.claim = pc.claim.text;
        cand.attribute = pc.claim.attribute;
        cand.value = pc.claim.value;
        cand.sim = hit.sim;
        return cand;
    }
    /// Extracts the claims of papers[p] for each p in `missing` (claims[p] is filled; failures
    /// leave it empty and are counted), storing each as it arrives.
    void extract_missing(const std::vector<std::size_t>& missing, std::vector<std::optional<std::vector<Claim>>>& claims,
                         PoolClaimStore& store, PoolStats& stats, const std::function<void(std::size_t, std::size_t)>& progress);
    /// Embeds every pool claim with its paper's title (reusing stored vectors) and builds the index.
    void index_pool_claims(const std::vector<std::optional<std::vector<Claim>>>& claims, PoolClaimStore& store,
                           PoolStats& stats);
    void start_grading(const std::vector<std::size_t>& ids, std::vector<std::unique_ptr<ProposalState>>& states,
                       const std::vector<PipelineProposal>& proposals);
    void start_judging(std::size_t i, ProposalState& st, const PipelineProposal& proposal);
};

ClaimNovPipeline::ClaimNovPipeline(ClaimExtractor& extractor, EntailmentGrader& grader, VerdictJudge& judge,
                                   Embedder& embedder, PipelineOptions options)
    : impl_(std::make_unique<Impl>(extractor, grader, judge, embedder, std::move(options))) {
    if (impl_->options.window == 0) throw UsageError("the pipeline window must be at least 1");
    if (impl_->options.embed_batch == 0) throw UsageError("the embedding batch must be at least 1");
}

ClaimNovPipeline::~ClaimNovPipeline() = default;

void ClaimNovPipeline::Impl::extract_missing(const std::vector<std::size_t>& missing,
                                             std::vector<std::optional<std::vector<Claim>>>& claims,
                                             PoolClaimStore& store, PoolStats& stats,
                                             const std::function<void(std::size_t, std::size_t)>& progress) {
    // Extract what the store lacks; results are stored one by one as they come, so an
    // interrupted run keeps what it paid for.
    const std::string extractor_name = extractor.name();
    std::deque<std::pair<std::size_t, Extraction>> arrived;
    std::size_t received = 0;
    try {
        for (std::size_t p : missing) {
            begin_call();
            extractor.extract({papers[p].id, papers[p].title, papers[p].abstract}, "pool-extract",
                                   [this, &arrived, p](Extraction e) {
                                       {
                                           std::lock_guard lock(mutex);
                                           arrived.emplace_back(p, std::move(e));
                                           --outstanding;
                                       }
                                       cv.notify_all();
                                   });
        }
        while (received < missing.size()) {
            std::deque<std::pair<std::size_t, Extraction>> batch;
            {
                std::unique_lock lock(mutex);
                cv.wait(lock, [&] { return !arrived.empty(); });
                batch.swap(arrived);
            }
            for (auto& [p, e] : batch) {
                ++received;
                if (!e.error.empty()) {
                    ++stats.failed;
                    if (stats.failures.size() < max_reported_failures) stats.failures.push_back(papers[p].id + ": " + e.error);
                    claims[p] = std::vector<Claim>{};
                    continue;
                }
                store.put_claims(extractor_name, papers[p].id, e.claims);
                claims[p] = std::move(e.claims);
                ++stats.extracted_now;
            }
            if (progress) progress(received, missing.size());
        }
    } catch (...) {
        if (options.cancel) options.cancel();
        wait_for_outstanding();
        throw;
    }

}

void ClaimNovPipeline::Impl::index_pool_claims(const std::vector<std::optional<std::vector<Claim>>>& claims,
                                               PoolClaimStore& store, PoolStats& stats) {
    // Embed each claim with its paper's title; reuse stored vectors.
    pool_claims.clear();
    std::vector<std::string> texts;
    for (std::size_t p = 0; p < papers.size(); ++p)
        for (const Claim& c : *claims[p]) {
            pool_claims.push_back({p, c});
            texts.push_back(embedding_text(papers[p].title, c.text));
        }
    const std::string embedder_name = embedder.name();
    std::vector<std::vector<float>> rows(texts.size());
    std::vector<std::size_t> to_embed;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        if (auto v = store.vector(embedder_name, texts[i])) rows[i] = std::move(*v);
        else to_embed.push_back(i);
    }
    for (std::size_t begin = 0; begin < to_embed.size(); begin += options.embed_batch) {
        const std::size_t end = std::min(to_embed.size(), begin + options.embed_batch);
        std::vector<std::string> chunk;
        for (std::size_t t = begin; t < end; ++t) chunk.push_back(texts[to_embed[t]]);
        const std::vector<float> out = embed(chunk);
        const std::size_t dim = out.size() / chunk.size();
        store.put_vectors(embedder_name, chunk, out, dim);
        for (std::size_t t = begin; t < end; ++t)
            rows[to_embed[t]].assign(out.begin() + (t - begin) * dim, out.begin() + (t - begin + 1) * dim);
        stats.embedded_now += chunk.size();
    }
    const std::size_t dim = rows.empty() ? 0 : rows[0].size();
    std::vector<float> flat;
    flat.reserve(rows.size() * dim);
    std::vector<IndexedClaim> indexed;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].size() != dim)
            throw Error("pool claim vectors have different dimensions (" + std::to_string(rows[i].size()) + " and " +
                        std::to_string(dim) + "): the claim store mixes embedders");
        flat.insert(flat.end(), rows[i].begin(), rows[i].end());
        indexed.push_back({papers[pool_claims[i].paper].row, pool_claims[i].claim.dimension});
    }
    index = std::make_unique<ClaimIndex>(std::move(indexed), std::move(flat), dim);
}

PoolStats ClaimNovPipeline::prepare_pool(std::vector<PoolPaper> papers, PoolClaimStore& store,
                                         const std::function<void(std::size_t, std::size_t)>& progress) {
    Impl& impl = *impl_;
    impl.papers = std::move(papers);
    impl.paper_of_row.clear();
    for (std::size_t p = 0; p < impl.papers.size(); ++p) impl.paper_of_row[impl.papers[p].row] = p;
    PoolStats stats;
    stats.papers = impl.papers.size();
    const std::string extractor_name = impl.extractor.name();

    std::vector<std::optional<std::vector<Claim>>> claims(impl.papers.size());
    std::vector<std::size_t> missing;
    for (std::size_t p = 0; p < impl.papers.size(); ++p) {
        claims[p] = store.claims(extractor_name, impl.papers[p].id);
        if (!claims[p]) missing.push_back(p);
    }

    impl.extract_missing(missing, claims, store, stats, progress);
    impl.index_pool_claims(claims, store, stats);
    stats.claims = impl.pool_claims.size();
    return stats;
}

void ClaimNovPipeline::Impl::start_grading(const std::vector<std::size_t>& ids,
                                           std::vector<std::unique_ptr<ProposalState>>& states,
                                           const std::vector<PipelineProposal>& proposals) {
    // Embed every claim of these proposals at once, each with its proposal's title.
    std::vector<std::string> texts;
    for (std::size_t i : ids)
        for (const Claim& c : states[i]->extraction.claims) texts.push_back(embedding_text(proposals[i].text.title, c.text));
    const std::vector<float> vectors = embed(texts);
    const std::size_t dim = texts.empty() ? 0 : vectors.size() / texts.size();
    if (dim != 0 && index->size() > 0 && dim != index->dim())
        throw Error("the embedder gives " + std::to_string(dim) + "-d vectors but the pool claims are " +
                    std::to_string(index->dim()) + "-d");

    // Retrieve all candidates first, then submit the grades (a synchronous grader completes at once).
    std::size_t t = 0;
    std::vector<std::pair<std::size_t, std::vector<std::pair<std::size_t, std::size_t>>>> jobs;  // proposal, (claim, cand)
    for (std::size_t i : ids) {
        ProposalState& st = *states[i];
        const PipelineProposal& p = proposals[i];
        std::vector<std::pair<std::size_t, std::size_t>> pairs;
        for (std::size_t c = 0; c < st.extraction.claims.size(); ++c, ++t) {
            ClaimResult cr;
            cr.claim = st.extraction.claims[c];
            if (index->size() > 0) {
                const std::vector<std::size_t>* pool = p.pool_rows.get();
                cr.n_papers = index->papers_with_claims(cr.claim.dimension, p.row_limit, p.excluded_rows, pool);
                cr.k = retrieval_depth(cr.n_papers, options.params);
                for (const ClaimHit& hit : index->search(vectors.data() + t * dim, cr.claim.dimension, cr.k, p.row_limit,
                                                         p.excluded_rows, pool))
                    cr.candidates.push_back(candidate_of(hit));
            } else {
                cr.k = retrieval_depth(0, options.params);
            }
            for (std::size_t k = 0; k < cr.candidates.size(); ++k) pairs.emplace_back(c, k);
            st.result.claims.push_back(std::move(cr));
        }
        {
            std::lock_guard lock(mutex);
            st.pending_grades = pairs.size();
            st.stage = pairs.empty() ? Stage::graded : Stage::grading;
            if (pairs.empty()) ready.push_back(i);
        }
        jobs.emplace_back(i, std::move(pairs));
    }
    for (auto& [i, pairs] : jobs) {
        ProposalState& st = *states[i];
        const PipelineProposal& p = proposals[i];
        for (const auto& [c, k] : pairs) {
            const ClaimResult& cr = st.result.claims[c];
            const CandidateResult& cand = cr.candidates[k];
            TitledText prior{cand.paper, cand.title, papers[paper_of_row.at(cand.paper_row)].abstract};
            begin_call();
            ProposalState* state = &st;
            const std::size_t proposal_index = i;
            grader.grade(p.text, cr.claim, prior, cand.claim, cand.sim, [this, state, proposal_index, c, k](Grade g) {
                bool done = false;
                {
                    std::lock_guard lock(mutex);
                    CandidateResult& target = state->result.claims[c].candidates[k];
                    target.level = g.error.empty() ? g.level : 0;
                    target.reason = std::move(g.reason);
                    target.error = std::move(g.error);
                    if (--state->pending_grades == 0) {
                        state->stage = Stage::graded;
                        done = true;
                    }
                }
                end_call(proposal_index, done);
            });
        }
    }
}

void ClaimNovPipeline::Impl::start_judging(std::size_t i, ProposalState& st, const PipelineProposal& proposal) {
    ProposalResult& r = st.result;
    std::vector<ScoredClaim> scored;
    std::vector<bool> strong;
    std::vector<std::vector<RuleCandidate>> rule_candidates;
    double best_e = -1;
    float best_sim = 0;
    Profile profile;
    profile.proposal = proposal.text;
    for (ClaimResult& cr : r.claims) {
        std::vector<int> levels;
        std::vector<RuleCandidate> rc;
        ProfileClaim pc;
        pc.claim = cr.claim;
        for (const CandidateResult& cand : cr.candidates) {
            if (cand.level == 0) {
                ++r.failed_grades;
                continue;
            }
            levels.push_back(cand.level);
            rc.push_back({cand.paper, cand.level, cand.sim});
            const double e = entailment_score(cand.level);
            if (e > best_e || (e == best_e && cand.sim > best_sim)) {
                best_e = e;
                best_sim = cand.sim;
                r.attribution = cand.paper;
            }
            ProfileCandidate p;
            p.paper.id = cand.paper;
            p.paper.title = cand.title;
            p.paper.text = papers[paper_of_row.at(cand.paper_row)].abstract;
            p.claim = cand.claim;
            p.attribute = cand.attribute;
            p.value = cand.value;
            p.sim = cand.sim;
            p.level = cand.level;
            pc.candidates.push_back(std::move(p));
        }
        cr.signals = claim_signals(levels, options.params);
        pc.anticipation = cr.signals.anticipation;
        std::stable_sort(pc.candidates.begin(), pc.candidates.end(), [](const ProfileCandidate& a, const ProfileCandidate& b) {
            return a.level != b.level ? a.level > b.level : a.sim > b.sim;
        });
        profile.claims.push_back(std::move(pc));
        scored.push_back({cr.claim.dimension, cr.importance, cr.signals.anticipation});
        strong.push_back(cr.signals.n_strong > 0);
        rule_candidates.push_back(std::move(rc));
    }
    r.novelty = proposal_novelty(scored, strong, options.params);
    profile.novelty = r.novelty.novelty;
    const RuleVerdict rv = rule_verdict(scored, rule_candidates, r.novelty.novelty, options.params);
    Verdict rule;
    rule.fail = rv.fail;
    rule.source = rv.source;
    rule.established = rv.established;
    rule.rationale = rv.fail ? "N(P) = " + std::to_string(r.novelty.novelty).substr(0, 5) + " is below " +
                                   std::to_string(options.params.rule_novelty_threshold).substr(0, 4) +
                                   " and prior work strongly matches " + std::to_string(rv.established.size()) + " claim(s)"
                             : "N(P) = " + std::to_string(r.novelty.novelty).substr(0, 5) +
                                   (r.novelty.breadth > 0 ? " is not below the threshold" : " and no strong match");
    {
        std::lock_guard lock(mutex);
        st.stage = Stage::judging;
    }
    begin_call();
    ProposalState* state = &st;
    judge.judge(profile, rule, [this, state, i](Verdict v) {
        {
            std::lock_guard lock(mutex);
            state->result.verdict = std::move(v);
            state->stage = Stage::judged;
        }
        end_call(i, true);
    });
}

void ClaimNovPipeline::run(const std::vector<PipelineProposal>& proposals,
                           const std::function<void(const ProposalResult&)>& on_result) {
    Impl& impl = *impl_;
    if (!impl.index) throw UsageError("prepare_pool() must run before run()");
    const std::size_t n = proposals.size();
    std::vector<std::unique_ptr<ProposalState>> states(n);
    std::size_t next = 0, active = 0, finished = 0;
    try {
        while (finished < n) {
            while (next < n && active < impl.options.window) {
                const std::size_t i = next++;
                ++active;
                states[i] = std::make_unique<ProposalState>();
                states[i]->result.index = i;
                states[i]->result.id = proposals[i].id;
                ProposalState* state = states[i].get();
                impl.begin_call();
                impl.extractor.extract(proposals[i].text, "extract", [&impl, state, i](Extraction e) {
                    {
                        std::lock_guard lock(impl.mutex);
                        state->extraction = std::move(e);
                        state->stage = Stage::extracted;
                    }
                    impl.end_call(i, true);
                });
            }
            std::deque<std::size_t> changed;
            {
                std::unique_lock lock(impl.mutex);
                impl.cv.wait(lock, [&] { return !impl.ready.empty(); });
                changed.swap(impl.ready);
            }
            std::vector<std::size_t> extracted, graded, judged;
            {
                std::lock_guard lock(impl.mutex);
                for (std::size_t i : changed) {
                    if (!states[i]) continue;
                    if (states[i]->stage == Stage::extracted) extracted.push_back(i);
                    else if (states[i]->stage == Stage::graded) graded.push_back(i);
                    else if (states[i]->stage == Stage::judged) judged.push_back(i);
                }
            }
            std::vector<std::size_t> to_grade;
            for (std::size_t i : extracted) {
                ProposalState& st = *states[i];
                if (!st.extraction.error.empty()) {
                    st.result.error = "claim extraction failed: " + st.extraction.error;
                    std::lock_guard lock(impl.mutex);
                    st.stage = Stage::judged;
                    judged.push_back(i);
                    continue;
                }
                to_grade.push_back(i);
            }
            if (!to_grade.empty()) impl.start_grading(to_grade, states, proposals);
            for (std::size_t i : graded) impl.start_judging(i, *states[i], proposals[i]);
            for (std::size_t i : judged) {
                on_result(states[i]->result);
                states[i].reset();
                --active;
                ++finished;
            }
        }
    } catch (...) {
        if (impl.options.cancel) impl.options.cancel();
        impl.wait_for_outstanding();
        {
            std::lock_guard lock(impl.mutex);
            impl.ready.clear();
        }
        throw;
    }
}

}  // namespace novelty::host
