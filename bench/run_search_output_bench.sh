#!/usr/bin/env bash
# `novelty search` as a whole process (query file to written JSON Lines or .npz) against its
# search alone and FAISS IndexFlatIP, on this machine. Installs the bench-only peers
# (bench/requirements.txt) into bench/.venv, builds the CPU configuration, and runs
# bench/search_output_bench.py. Extra arguments go to the script (e.g. --n-corpus 20000 for a
# quick run). Results go to docs/benchmarks.md by hand, with the machine and date.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/bench/.venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements.txt"
"$here/scripts/build.sh" cpu >/dev/null
exec "$venv/bin/python" "$here/bench/search_output_bench.py" --novelty "$here/build/cpu/novelty" \
    --engine "$here/build/cpu/bench/search_bench" "$@"
