#!/usr/bin/env bash
# The long fuzz run: each target of fuzz/ for SECONDS (default 600), one after another, or all
# at once with --parallel (one core each). Results (inputs run, rate, coverage, findings) are
# printed and kept in build/fuzz/<target>.log; docs/benchmarks.md records a run.
# Usage: bench/run_fuzz.sh [--parallel] [SECONDS]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
parallel=0
if [ "${1:-}" = "--parallel" ]; then parallel=1; shift; fi
seconds="${1:-600}"
targets=(import_fuzz pubmed_fuzz npy_fuzz request_fuzz)
"$here/scripts/fuzz.sh" 1 "${targets[@]}" >/dev/null   # builds them (and runs each for 1 s)
if [ "$parallel" = 1 ]; then
  pids=()
  for t in "${targets[@]}"; do
    NOVELTY_FUZZ_NO_BUILD=1 "$here/scripts/fuzz.sh" "$seconds" "$t" 2>"$here/build/fuzz/$t.summary" &
    pids+=($!)
  done
  status=0
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  for t in "${targets[@]}"; do grep -E '^fuzz: ' "$here/build/fuzz/$t.summary" || true; done
  exit "$status"
fi
"$here/scripts/fuzz.sh" "$seconds" "${targets[@]}"
