#!/usr/bin/env bash
# The built-in encoder against sentence-transformers (PyTorch, CPU) on this machine. Installs the
# bench-only peers (bench/requirements-encoder.txt, several GB: PyTorch wheels) into bench/.venv,
# builds the CPU configuration and runs bench/encoder_vs_sentence_transformers.py. Extra
# arguments go to the script (e.g. --n 200 for a quick run).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/bench/.venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements-encoder.txt"
"$here/scripts/build.sh" cpu >/dev/null
exec "$venv/bin/python" "$here/bench/encoder_vs_sentence_transformers.py" --engine "$here/build/cpu/bench/encoder_bench" \
  --model "$here/models/all-MiniLM-L6-v2" --data "$here/../shared/data/ml_papers_paperlists.jsonl.gz" "$@"
