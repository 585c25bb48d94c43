// The flags that configure the ClaimNov stages and constants, shared by `novelty claims` and
// `novelty serve` (for POST /v1/claims), so that both take the same settings with the same
// defaults (docs/cli.md, docs/claimnov.md).
#pragma once

#include "novelty_host/claimnov/claims_setup.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace novelty::cli {

/// Adds --llm, --llm-model, --llm-key, --judge, --judge-model, --judge-candidates,
/// --judge-abstract-chars, --concurrency, --timeout, --retries, --max-tokens, --alpha, --weights and
/// --threshold; `prefix` starts every description ("" or "Claims: ").
void add_claims_stage_flags(CLI::App& command, host::ClaimsLlmSettings& llm, host::ClaimsMethodSettings& method,
                            const std::string& prefix);

}  // namespace novelty::cli
