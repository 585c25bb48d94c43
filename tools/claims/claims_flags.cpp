#include "claims_flags.hpp"

#include "cli_common.hpp"

namespace novelty::cli {

void add_claims_stage_flags(CLI::App& cmd, host::ClaimsLlmSettings& llm, host::ClaimsMethodSettings& method,
                            const std::string& prefix) {
    cmd.add_option("--llm", llm.llm,
                   prefix + "extraction and grading: 'offline' (default; heuristic typing and similarity grades, an "
                            "approximation), the base URL of an OpenAI-compatible server (http://host:8000/v1), or 'env' "
                            "for $NOVELTY_LLM_BASE_URL");
    cmd.add_option("--llm-model", llm.llm_model,
                   prefix + "model name (default: $NOVELTY_LLM_MODEL, else the server's model when /models lists "
                            "exactly one)");
    cmd.add_option("--llm-key", llm.llm_key, prefix + "API key (default: $NOVELTY_LLM_API_KEY, else $OPENAI_API_KEY)");
    cmd.add_option("--judge", llm.judge,
                   prefix + "verdict judge: 'auto' (default, the paper's: the LLM judge when --llm names a server, else "
                            "the rule), 'llm', 'rule' (N(P) below --threshold plus a strong match; the paper's "
                            "ablation), or another server's base URL");
    cmd.add_option("--judge-model", llm.judge_model, prefix + "model of a --judge URL (default: the --llm-model)");
    cmd.add_option("--judge-candidates", llm.judge_view.max_candidates,
                   prefix + "candidates per claim shown to the LLM judge, strongest first (default 0 = all, the "
                            "paper's whole profile; cut for small context windows)");
    cmd.add_option("--judge-abstract-chars", llm.judge_view.max_abstract_chars,
                   prefix + "abstract bytes per candidate shown to the LLM judge (default 0 = whole abstracts)");
    cmd.add_option("--concurrency", llm.concurrency,
                   prefix + "LLM requests in flight at most (default 8, or $NOVELTY_LLM_CONCURRENCY)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
        ->each([&llm](const std::string&) { llm.concurrency_given = true; });
    cmd.add_option("--timeout", llm.timeout_seconds, prefix + "seconds per LLM attempt (default 120)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--retries", llm.retries, prefix + "retries per LLM call after the first attempt (default 5)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_option("--max-tokens", llm.max_tokens,
                   prefix + "most tokens per LLM answer (default 0: the server's default); an answer cut short fails "
                            "its schema and gets the one repair")
        ->check(CLI::Range(0, 1 << 20));
    cmd.add_option("--alpha", method.alpha,
                   prefix + "rank discount of a(c), in (0, 1] (default 0.5, the paper's)");
    cmd.add_option("--weights", method.weights,
                   prefix + "dimension weights as DIMENSION=WEIGHT pairs, e.g. problem=0.5,result=0.2; dimensions not "
                            "named keep the paper's (problem 0.4, methodology 0.2, resource 0.1, result 0.3)");
    cmd.add_option("--threshold", method.threshold,
                   prefix + "no-judge rule: fail below this N(P) when a claim is strongly matched (default 0.5)")
        ->check(non_empty_value());
}

}  // namespace novelty::cli
