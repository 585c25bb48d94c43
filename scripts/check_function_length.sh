#!/usr/bin/env bash
# Checks that no function in engine/, host/, tools/ or fuzz/ is longer than 80 lines (DESIGN.md
# section 9: small functions with names that say what they do). Uses lizard, which
# scripts/setup.sh installs in .venv. Run by scripts/test.sh; prints the offenders and fails.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
lizard="$here/.venv/bin/lizard"
[ -x "$lizard" ] || { echo "check: $lizard is missing; run scripts/setup.sh" >&2; exit 1; }
# Only the length counts here (-L); complexity and argument limits are set out of reach.
if ! "$lizard" --length 80 --CCN 1000 --arguments 100 --warnings_only engine host tools fuzz; then
  echo "check: the functions above are longer than 80 lines; split them into named parts" >&2
  exit 1
fi
echo "check: no function is longer than 80 lines" >&2
