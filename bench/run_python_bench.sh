#!/usr/bin/env bash
# Per-call cost of a search from Python, the CLI and the HTTP API, 1 and 10,000 queries, on the
# demo corpus (docs/benchmarks.md, "Python API against the CLI and the HTTP API").
#   bench/run_python_bench.sh          (NOVELTY_BENCH_THREADS=N to pin the engine's threads)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
work="${NOVELTY_BENCH_WORK:-/tmp/novelty-python-bench}"
mkdir -p "$work"
novelty="$here/build/cpu/novelty"
"$novelty" corpus import -q --overwrite --format paperlists openalex --field ml biomed \
    --in "$here/data/demo/ml_papers_demo.jsonl.gz" "$here/data/demo/biomed_demo.jsonl.gz" --out "$work/corpus" >/dev/null
"$novelty" corpus add-vectors -q "$work/corpus" --vectors "$here/data/demo/vectors_minilm_f16.npy" \
    --ids "$here/data/demo/vector_ids.txt" --embedder all-MiniLM-L6-v2 --pooling mean >/dev/null
"$here/.venv/bin/python" "$here/bench/python_overhead.py" "$work/corpus"
