#!/usr/bin/env bash
# The CPU encoder at f32 and bf16 side by side (bench/encoder_precision_bench.py), on abstracts
# spread over ../shared/data/ml_papers_paperlists.jsonl.gz, appending dated JSON Lines to
# bench/results/. sentence-transformers joins as a peer when bench/.venv has it (installed by
# bench/run_encoder_bench.sh); otherwise the project's .venv runs the script. Extra arguments go
# to the script (e.g. --n 200 --repeat 1 for a quick run).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$here/bench/.venv/bin/python"
[ -x "$python" ] || python="$here/.venv/bin/python"
NOVELTY_BUILD_TARGETS="encoder_bench" "$here/scripts/build.sh" cpu >/dev/null
exec "$python" "$here/bench/encoder_precision_bench.py" --engine "$here/build/cpu/bench/encoder_bench" \
  --model "$here/models/all-MiniLM-L6-v2" --data "$here/../shared/data/ml_papers_paperlists.jsonl.gz" \
  --ideas "$here/data/ideas.jsonl" --demo-vectors "$here/data/demo/vectors_minilm_f16.npy" \
  --results "$here/bench/results/$(date -u +%Y-%m-%d)-encoder-precision.jsonl" "$@"
