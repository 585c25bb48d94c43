#!/usr/bin/env bash
# RND scoring with cached densities against the paper's direct Algorithm 2, on a synthetic
# 100,000-paper corpus of clustered 384-d vectors and 10,000 ideas from the same distribution.
# Builds the CPU configuration, makes the data with numpy in bench/.venv, imports it, and runs
# build/cpu/bench/score_bench (the direct path is timed on a sample of ideas). Usage:
#   bench/run_score_bench.sh [--n-corpus 100000] [--n-ideas 10000]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n_corpus=100000
n_ideas=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --n-corpus) n_corpus="$2"; shift 2 ;;
    --n-ideas) n_ideas="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
venv="$here/bench/.venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements.txt"
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
work="${NOVELTY_BENCH_WORK:-/tmp/novelty-score-bench}"
mkdir -p "$work"
"$venv/bin/python" - "$work" "$n_corpus" "$n_ideas" <<'PY'
import json, sys
import numpy as np
work, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(7)
centers = rng.standard_normal((2000, 384), dtype=np.float32)
def draw(k):
    x = centers[rng.integers(0, len(centers), k)] + 0.7 * rng.standard_normal((k, 384), dtype=np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
np.save(f"{work}/vectors.npy", draw(n))
np.save(f"{work}/ideas.npy", draw(m))
with open(f"{work}/papers.jsonl", "w") as f, open(f"{work}/ids.txt", "w") as ids:
    for i in range(n):
        f.write(json.dumps({"id": f"b{i}", "title": f"Paper {i}", "year": 1990 + i % 35}) + "\n")
        ids.write(f"b{i}\n")
PY
novelty="$here/build/cpu/novelty"
"$novelty" corpus import -q --overwrite --in "$work/papers.jsonl" --out "$work/corpus" >/dev/null
"$novelty" corpus add-vectors -q "$work/corpus" --vectors "$work/vectors.npy" --ids "$work/ids.txt" >/dev/null
/usr/bin/time -v "$here/build/cpu/bench/score_bench" "$work/corpus" "$work/ideas.npy" 2>"$work/time.txt"
grep -E "Maximum resident" "$work/time.txt" >&2
