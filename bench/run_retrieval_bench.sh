#!/usr/bin/env bash
# Queries per second of `novelty retrieve`'s methods (dense, BM25, hybrid) over the full ML corpus
# (../shared/data/ml_papers_paperlists.jsonl.gz, imported once into a work directory). BM25 runs
# on the real titles and abstracts; dense uses random unit vectors of dimension 384 unless the
# corpus has vectors (embedding 87k abstracts on a small machine takes too long for a benchmark).
# Usage: bench/run_retrieval_bench.sh [--queries 200] [--k 100] [--fusion-depth 1000]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${NOVELTY_SHARED_DATA:-$here/../shared/data}/ml_papers_paperlists.jsonl.gz"
work="${NOVELTY_BENCH_WORK:-/tmp/novelty-retrieval-bench}"
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
novelty="$here/build/cpu/novelty"
if [ ! -f "$work/ml/manifest.json" ]; then
  mkdir -p "$work"
  "$novelty" corpus import -q --overwrite --format paperlists --field ml --in "$data" --out "$work/ml"
fi
"$here/build/cpu/bench/retrieval_bench" "$work/ml" "$@"
