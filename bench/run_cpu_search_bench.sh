#!/usr/bin/env bash
# The CPU search and self-join against FAISS (IndexFlatIP, IndexScalarQuantizer fp16 and bf16)
# on this machine. Installs the bench-only peers (bench/requirements.txt) into bench/.venv, builds
# the CPU configuration, and runs bench/cpu_search_vs_faiss.py. Extra arguments go to the script (e.g. --n-corpus 20000 for a
# quick run). Appends dated JSON Lines to bench/results/; the tables go to docs/benchmarks.md by hand.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/bench/.venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements.txt"
"$here/scripts/build.sh" cpu >/dev/null
exec "$venv/bin/python" "$here/bench/cpu_search_vs_faiss.py" --engine "$here/build/cpu/bench/search_bench" \
  --results "$here/bench/results/$(date -u +%Y-%m-%d)-cpu-search.jsonl" "$@"
