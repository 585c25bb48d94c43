#!/usr/bin/env bash
# Thread scaling of the built-in encoder on the CPU: encoder_bench with 1 and 2 threads (more with
# THREADS="1 2 4"), alternating REPS times (default 3), on the first N abstracts of the demo corpus
# (default 300), with MODEL (default all-MiniLM-L6-v2). Prints one JSON line per run and the median
# speed-up of each thread count over one thread. Usage:
#   bench/run_encoder_thread_scaling.sh [N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-300}"
model="${MODEL:-$here/models/all-MiniLM-L6-v2}"
bench="$here/build/cpu/bench/encoder_bench"
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
results="$tmp/results.txt"
for rep in $(seq "${REPS:-3}"); do
  for threads in ${THREADS:-1 2}; do
    line=$(OPENBLAS_NUM_THREADS=1 "$bench" "$model" "$here/data/demo/ml_papers_demo.jsonl.gz" "$tmp/out.npy" "$threads" cpu "" "$n")
    echo "$threads $line" | tee -a "$results"
  done
done
python3 - "$results" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    threads, rest = line.split(" ", 1)
    runs.setdefault(int(threads), []).append(json.loads(rest)["seconds"])
one = statistics.median(runs[1])
for t, s in sorted(runs.items()):
    m = statistics.median(s)
    print(json.dumps({"threads": t, "median_seconds": round(m, 3), "runs": [round(x, 3) for x in s],
                      "speedup_over_one": round(one / m, 3)}))
PY
