#!/usr/bin/env bash
# The CPU encoder at f32, bf16 and int8 side by side with its peers (bench/encoder_precision_bench.py):
# sentence-transformers (PyTorch float32) and ONNX Runtime float32 and int8 (quantize_dynamic,
# default and per channel) on the same all-MiniLM-L6-v2 weights, exported to ONNX locally, on
# abstracts spread over ../shared/data/ml_papers_paperlists.jsonl.gz, appending dated JSON Lines
# to bench/results/. Installs the bench-only peers (bench/requirements-encoder.txt, several GB:
# PyTorch wheels) into bench/.venv unless NOVELTY_BENCH_NO_PEERS=1, which measures the engine
# alone with the project's .venv. Extra arguments go to the script (e.g. --n 200 --repeat 1).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$here/.venv/bin/python"
if [ "${NOVELTY_BENCH_NO_PEERS:-0}" != 1 ]; then
  venv="$here/bench/.venv"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements-encoder.txt"
  python="$venv/bin/python"
fi
NOVELTY_BUILD_TARGETS="encoder_bench" "$here/scripts/build.sh" cpu >/dev/null
exec "$python" "$here/bench/encoder_precision_bench.py" --engine "$here/build/cpu/bench/encoder_bench" \
  --model "$here/models/all-MiniLM-L6-v2" --data "$here/../shared/data/ml_papers_paperlists.jsonl.gz" \
  --ideas "$here/data/ideas.jsonl" --demo-vectors "$here/data/demo/vectors_minilm_f16.npy" \
  --results "$here/bench/results/$(date -u +%Y-%m-%d)-encoder-precision.jsonl" "$@"
