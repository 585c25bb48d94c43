#!/usr/bin/env bash
# The default encoder (`novelty embed`, --precision auto) against sentence-transformers and ONNX
# Runtime int8 per channel, whole process, on 2,000 abstracts of ../shared/data at 2 threads
# (bench/default_encoder_bench.py), appending dated JSON Lines to bench/results/. Installs the
# bench-only peers (bench/requirements-encoder.txt, several GB: PyTorch wheels) into bench/.venv.
# Extra arguments go to the script (e.g. --n 200 --repeat 1).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/bench/.venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements-encoder.txt"
[ -x "$here/build/cpu/novelty" ] || NOVELTY_BUILD_TARGETS="novelty" "$here/scripts/build.sh" cpu >/dev/null
exec "$venv/bin/python" "$here/bench/default_encoder_bench.py" --novelty "$here/build/cpu/novelty" \
  --model "$here/models/all-MiniLM-L6-v2" --data "$here/../shared/data/ml_papers_paperlists.jsonl.gz" \
  --results "$here/bench/results/$(date -u +%Y-%m-%d)-default-encoder.jsonl" "$@"
