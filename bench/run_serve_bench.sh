#!/usr/bin/env bash
# HTTP server: requests per second and p50/p99 latency at 1, 16 and 64 concurrent clients,
# batching on and off, for POST /v1/score (p=100, q=50) and POST /v1/search (k=10) with one idea
# per request, on the demo corpus (3,300 papers, 384-d all-MiniLM-L6-v2 vectors). Builds the CPU
# configuration, imports the demo corpus, caches its densities, and runs build/cpu/bench/serve_bench.
#   bench/run_serve_bench.sh [--requests 2000]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requests=2000
while [ $# -gt 0 ]; do
  case "$1" in
    --requests) requests="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
work="${NOVELTY_BENCH_WORK:-/tmp/novelty-serve-bench}"
mkdir -p "$work"
novelty="$here/build/cpu/novelty"
"$novelty" corpus import -q --overwrite --format paperlists openalex --field ml biomed \
    --in "$here/data/demo/ml_papers_demo.jsonl.gz" "$here/data/demo/biomed_demo.jsonl.gz" --out "$work/corpus" >/dev/null
"$novelty" corpus add-vectors -q "$work/corpus" --vectors "$here/data/demo/vectors_minilm_f16.npy" \
    --ids "$here/data/demo/vector_ids.txt" --embedder all-MiniLM-L6-v2 --pooling mean >/dev/null
"$novelty" index -q "$work/corpus" --q 50 >/dev/null
"$here/build/cpu/bench/serve_bench" "$work/corpus" --endpoint score --requests "$requests"
"$here/build/cpu/bench/serve_bench" "$work/corpus" --endpoint search --requests "$requests"
