#!/usr/bin/env bash
# The Semantic Scholar-compatible search of `novelty serve` on the demo corpus: p50/p90/p99
# latency of 100 sequential AI-Scientist-shaped searches (bench/s2_search_bench.py): hybrid (the
# default ranking), dense and bm25 with the server's default flags, and hybrid with the
# batcher's wait at 0.
# Appends one JSON line per run to bench/results/DATE-s2-search.jsonl.
#   bench/run_s2_bench.sh [--requests 100]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requests=100
while [ $# -gt 0 ]; do
  case "$1" in
    --requests) requests="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
work="${NOVELTY_BENCH_WORK:-/tmp/novelty-s2-bench}"
mkdir -p "$work"
novelty="$here/build/cpu/novelty"
python="$here/.venv/bin/python"
[ -x "$python" ] || python=python3
"$novelty" corpus import -q --overwrite --format paperlists openalex --field ml biomed \
    --in "$here/data/demo/ml_papers_demo.jsonl.gz" "$here/data/demo/biomed_demo.jsonl.gz" --out "$work/corpus" >/dev/null
"$novelty" corpus add-vectors -q "$work/corpus" --vectors "$here/data/demo/vectors_minilm_f16.npy" \
    --ids "$here/data/demo/vector_ids.txt" --embedder all-MiniLM-L6-v2 --pooling mean >/dev/null
out="$here/bench/results/$(date -u +%F)-s2-search.jsonl"

# One server: start it with the given flags, measure each ranking named in $rankings, stop it.
run() {
  local label="$1"; shift
  "$novelty" serve --corpus "$work/corpus" --port 0 "$@" 2>"$work/serve.log" &
  local pid=$!
  local base=""
  for _ in $(seq 1 600); do
    base="$(grep -o 'http://[0-9.]*:[0-9]*' "$work/serve.log" | head -1 || true)"
    [ -n "$base" ] && break
    sleep 0.1
  done
  [ -n "$base" ] || { cat "$work/serve.log" >&2; kill "$pid"; exit 1; }
  for ranking in $rankings; do
    "$python" "$here/bench/s2_search_bench.py" --base "$base" --requests "$requests" --ranking "$ranking" \
        --label "$label" --out "$out"
  done
  kill -TERM "$pid"
  wait "$pid" || true
}

rankings="hybrid dense bm25" run "defaults"
rankings="hybrid" run "max-wait-ms 0" --max-wait-ms 0
echo "appended to $out" >&2
