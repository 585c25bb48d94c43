#!/usr/bin/env bash
# ClaimNov pipeline throughput with a fake LLM (no network): builds claims_bench and runs it.
#   bench/run_claims_bench.sh [build_dir] [pool_papers] [proposals]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build/cpu}"
cmake --build "$build" --target claims_bench -j"$(nproc)" >/dev/null
"$build/bench/claims_bench" "${2:-2000}" "${3:-500}"
