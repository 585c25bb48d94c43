#!/usr/bin/env bash
# The pre-registered confirmation of the score sweep (docs/devset.md, "The confirmation set"):
# a fresh development set (seed 2026, the whole biomedical file and as many ML papers, its
# negatives and biomedical positives disjoint from the first set's), embedded with the built-in
# encoder, then one `novelty eval sweep` over the grid and the paired comparisons fixed in
# docs/devset.md before the run.
#   bench/run_devset_confirm.sh [WORK_DIR] [novelty binary]
# About 13,900 abstracts to embed (about 15 papers per CPU-second: 15 CPU-minutes); every step is
# skipped when its output is there, and an interrupted embedding resumes. EMBED_ONLY=1 stops
# after the embedding. Run it under the shared lock of heavy measurements if the machine has one.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/devset/corpus_steps.sh
source "$here/bench/devset/corpus_steps.sh"
work="${1:-$here/build/devset-confirm}"
novelty="${2:-$here/build/cpu/novelty}"
[ -x "$novelty" ] || novelty="$here/build/auto/novelty"
data="${NOVELTY_DATA:-$here/../shared/data}"
mkdir -p "$work"
build() { python3 "$here/bench/devset/build_devset.py" --ml "$data/ml_papers_paperlists.jsonl.gz" \
  --biomed "$data/biomed_synergy_openalex.jsonl.gz" "$@"; }

# The first set (the builder's defaults), only for its labels: the fresh set draws none of them.
[ -f "$work/first/devset.json" ] || build --out "$work/first"
[ -f "$work/set/devset.json" ] || build --out "$work/set" --seed 2026 --ml-corpus-size 6937 \
  --biomed-corpus-size 0 --exclude-labels "$work/first/labels.jsonl"
devset_corpus "$work" "$novelty"
[ "${EMBED_ONLY:-0}" = 1 ] && exit 0

# The pre-registered grid and comparisons (docs/devset.md). P 1150 is P 500's share of the first
# set's corpus (a twelfth) applied to this one's.
"$novelty" eval sweep --corpus "$work/corpus" --ideas "$work/set/ideas.jsonl" --labels "$work/set/labels.jsonl" \
  --group-by field --p 50,100,200,300,500,700,1000,1150,1500 --q 5,10,20,50 --hd 1,3,5,10,20 \
  --densities cos,euclid --bootstrap 1000 --seed 1 --folds 5 \
  --paired "rnd[cos,P=500,Q=5]:rnd[cos,P=100,Q=50],rnd[cos,P=500,Q=5]:hd[n=5],mean[rnd,rel_hd][P=200]:rnd[cos,P=100,Q=50],mean[rnd,rel_hd][P=200]:hd[n=5],rnd[cos,P=1150,Q=5]:rnd[cos,P=500,Q=5],rnd[cos,P=1150,Q=5]:hd[n=5]" \
  --out "$work/sweep.json" --plot "$work/sweep.svg" | tee "$work/sweep.txt"
