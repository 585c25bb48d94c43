#!/usr/bin/env bash
# The development set of docs/devset.md, and the score sweep on it (docs/scoring.md).
#   bench/run_devset_sweep.sh [WORK_DIR] [novelty binary]
# Builds the set from ../shared/data (bench/devset/build_devset.py), imports and embeds its
# corpus with the built-in encoder (6,000 abstracts by default: the slow step, resumable), then runs
# `novelty eval sweep`. Every step is skipped when its
# output is already there, so an interrupted run continues where it stopped.
# Extra flags for the builder go in DEVSET_FLAGS (e.g. DEVSET_FLAGS="--ml-corpus-size 0" for the
# whole ML file, about 45 minutes more of embedding on an idle 2-core machine).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/devset/corpus_steps.sh
source "$here/bench/devset/corpus_steps.sh"
work="${1:-$here/build/devset}"
novelty="${2:-$here/build/cpu/novelty}"
[ -x "$novelty" ] || novelty="$here/build/auto/novelty"
data="${NOVELTY_DATA:-$here/../shared/data}"
mkdir -p "$work"

if [ ! -f "$work/set/devset.json" ]; then
  python3 "$here/bench/devset/build_devset.py" --ml "$data/ml_papers_paperlists.jsonl.gz" \
    --biomed "$data/biomed_synergy_openalex.jsonl.gz" --out "$work/set" ${DEVSET_FLAGS:-}
fi
devset_corpus "$work" "$novelty"

"$novelty" eval sweep --corpus "$work/corpus" --ideas "$work/set/ideas.jsonl" --labels "$work/set/labels.jsonl" \
  --group-by field --bootstrap "${BOOTSTRAP:-1000}" --out "$work/sweep.json" --plot "$work/sweep.svg" | tee "$work/sweep.txt"
# The follow-up: the first sweep's winner sat at its largest P (200), so a second sweep goes
# further in P, with fewer Q and definitions (docs/benchmarks.md reports both).
"$novelty" eval sweep -q --corpus "$work/corpus" --ideas "$work/set/ideas.jsonl" --labels "$work/set/labels.jsonl" \
  --group-by field --p 100,200,300,500 --q 5,20,50 --hd 5 --densities cos,euclid --bootstrap 200 \
  --out "$work/sweep_p500.json" | tee "$work/sweep_p500.txt"
