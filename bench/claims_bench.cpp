// ClaimNov pipeline throughput with a fake OpenAI-compatible LLM on 127.0.0.1 (tests/fake_llm_server.hpp)
// and a hashing embedder, so only the pipeline, the client and retrieval are measured.
//   claims_bench [pool_papers] [proposals]
// Prints: offline proposals/s; zero-latency LLM proposals/s and calls per proposal; and with
// 200 ms of fake latency, proposals/s and calls/s at concurrency 1, 4, 16, 64.
#include "fake_llm_server.hpp"

#include "novelty/encoder/embedder.hpp"
#include "novelty_host/claimnov/claimnov_pipeline.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace novelty;
using namespace novelty::host;

namespace {

class HashEmbedder : public Embedder {
public:
    std::string name() const override { return "hash-256"; }
    std::size_t dim() const override { return 256; }
    std::string pooling() const override { return ""; }
    std::vector<float> embed(const std::vector<std::string>& texts) override {
        std::vector<float> out;
        out.reserve(texts.size() * 256);
        for (const auto& t : texts) {
            std::vector<float> v(256, 0.0f);
            v[255] = 0.1f;
            std::istringstream words(t);
            for (std::string w; words >> w;) {
                std::uint64_t h = 1469598103934665603ULL;
                for (unsigned char c : w) h = (h ^ c) * 1099511628211ULL;
                v[h % 255] += 1.0f;
            }
            double n = 0;
            for (float x : v) n += x * x;
            for (float& x : v) x = static_cast<float>(x / std::sqrt(n));
            out.insert(out.end(), v.begin(), v.end());
        }
        return out;
    }
};

std::vector<PoolPaper> make_pool(std::size_t n) {
    std::vector<PoolPaper> pool;
    for (std::size_t i = 0; i < n; ++i)
        pool.push_back({i, "p" + std::to_string(i), "Paper " + std::to_string(i),
                        "We study topic " + std::to_string(i % 97) + " in setting " + std::to_string(i % 13) +
                            ". We propose method m" + std::to_string(i) + " using block " + std::to_string(i % 31) +
                            ". Our approach improves accuracy on benchmark b" + std::to_string(i % 7) + " by " +
                            std::to_string(i % 10) + " points"});
    return pool;
}

std::vector<PipelineProposal> make_proposals(std::size_t n) {
    std::vector<PipelineProposal> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        out[i].id = "q" + std::to_string(i);
        out[i].text = {"", "Idea " + std::to_string(i),
                       "We study topic " + std::to_string((i * 7) % 97) + " in a new setting. We propose method z" +
                           std::to_string(i) + " with block " + std::to_string(i % 31)};
    }
    return out;
}

struct Run {
    double seconds = 0;
    std::size_t proposals = 0;
    std::uint64_t calls = 0;
};

Run run_pipeline(ClaimExtractor& ex, EntailmentGrader& gr, VerdictJudge& ju, PoolClaimStore& store, std::size_t pool_papers,
                 std::size_t n, ChatClient* client, std::size_t window) {
    HashEmbedder embedder;
    PipelineOptions options;
    options.window = window;
    ClaimNovPipeline pipeline(ex, gr, ju, embedder, options);
    pipeline.prepare_pool(make_pool(pool_papers), store);
    const std::uint64_t calls_before = client ? client->usage()["total"].calls : 0;
    const auto proposals = make_proposals(n);
    const auto start = std::chrono::steady_clock::now();
    std::size_t done = 0;
    pipeline.run(proposals, [&](const ProposalResult&) { ++done; });
    Run r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.proposals = done;
    r.calls = client ? client->usage()["total"].calls - calls_before : 0;
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t pool_papers = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
    const std::size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 500;
    PoolClaimStore store(":memory:");
    {
        auto ex = make_offline_extractor();
        auto gr = make_offline_grader();
        auto ju = make_rule_judge("offline-approx");
        run_pipeline(*ex, *gr, *ju, store, pool_papers, 1, nullptr, 64);  // pool extraction and embedding, not timed
        const Run r = run_pipeline(*ex, *gr, *ju, store, pool_papers, n, nullptr, 64);
        std::printf("offline (retrieval + aggregation + rule), pool %zu papers: %zu proposals in %.3f s = %.0f proposals/s\n",
                    pool_papers, r.proposals, r.seconds, r.proposals / r.seconds);
    }
    novelty::test::FakeLlmServer server(160);
    {
        ChatClientOptions o;
        o.base_url = server.base_url();
        o.model = "fake";
        o.concurrency = 64;
        ChatClient client(o);
        auto ex = make_llm_extractor(client);
        auto gr = make_llm_grader(client);
        auto ju = make_llm_judge(client);
        PoolClaimStore llm_store(":memory:");
        run_pipeline(*ex, *gr, *ju, llm_store, pool_papers, 1, &client, 64);
        const Run r = run_pipeline(*ex, *gr, *ju, llm_store, pool_papers, n, &client, 256);
        std::printf("zero-latency fake LLM, concurrency 64: %zu proposals in %.3f s = %.1f proposals/s, %.1f LLM calls per "
                    "proposal, %.0f calls/s\n",
                    r.proposals, r.seconds, r.proposals / r.seconds, static_cast<double>(r.calls) / r.proposals,
                    r.calls / r.seconds);
    }
    server.set_delay_ms(200);
    for (std::size_t concurrency : {1, 4, 16, 64}) {
        ChatClientOptions o;
        o.base_url = server.base_url();
        o.model = "fake";
        o.concurrency = concurrency;
        ChatClient client(o);
        auto ex = make_offline_extractor();  // pool claims offline: this part times the proposals only
        auto gr = make_llm_grader(client);
        auto ju = make_llm_judge(client);
        auto lx = make_llm_extractor(client);
        PoolClaimStore s(":memory:");
        const std::size_t proposals = std::max<std::size_t>(2, concurrency);
        HashEmbedder embedder;
        PipelineOptions options;
        options.window = 4 * concurrency;
        ClaimNovPipeline pipeline(*lx, *gr, *ju, embedder, options);
        {
            ClaimNovPipeline pool_only(*ex, *gr, *ju, embedder, options);
            pool_only.prepare_pool(make_pool(50), s);
        }
        // The LLM extractor names its claims differently; give it the offline pool under its name.
        for (const auto& p : make_pool(50)) s.put_claims(lx->name(), p.id, *s.claims(ex->name(), p.id));
        pipeline.prepare_pool(make_pool(50), s);
        const auto list = make_proposals(proposals);
        const auto start = std::chrono::steady_clock::now();
        std::size_t done = 0;
        pipeline.run(list, [&](const ProposalResult&) { ++done; });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const auto calls = client.usage()["total"].calls;
        std::printf("200 ms fake latency, concurrency %3zu: %3zu proposals in %6.2f s = %6.2f proposals/s, %6.1f calls/s "
                    "\n",
                    concurrency, done, seconds, done / seconds, calls / seconds);
    }
    return 0;
}
