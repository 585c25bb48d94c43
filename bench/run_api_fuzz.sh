#!/usr/bin/env bash
# The long run of the HTTP API's property-based fuzzing (python/tests/test_api_fuzz.py): every
# operation of docs/openapi.yaml, NOVELTY_FUZZ_EXAMPLES generated requests each (default 300;
# CI runs 12), against `novelty serve` on the demo corpus without and with a token. Fails on a 5xx,
# a status or shape the description does not give, or a refusal that is not JSON with a message.
#   bench/run_api_fuzz.sh [--examples 300]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
examples=300
while [ $# -gt 0 ]; do
  case "$1" in
    --examples) examples="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
cd "$here"
NOVELTY_BUILD="$here/build/cpu" NOVELTY_FUZZ_EXAMPLES="$examples" \
  "$here/.venv/bin/python" -m pytest -q -p no:cacheprovider python/tests/test_api_fuzz.py
