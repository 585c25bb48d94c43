#!/usr/bin/env bash
# The pre-registered third set of the score sweep (docs/devset.md, "The third set"): fresh in every
# label (255 orals of 2019 at CVPR, ICCV and ICML drawn with the seed; negatives and biomedical
# ideas that are no label of the first two sets), with the second set's design (the whole
# biomedical file and as many ML papers up to 2019), embedded with the built-in encoder, then one
# `novelty eval sweep` over the grid and the paired comparisons fixed in docs/devset.md before the run.
#   bench/run_devset_third.sh [WORK_DIR] [novelty binary]
# About 13,900 abstracts to embed (about 15 papers per CPU-second: 15 CPU-minutes); every step is
# skipped when its output is there, and an interrupted embedding resumes. EMBED_ONLY=1 stops
# after the embedding. Run it under the shared lock of heavy measurements if the machine has one.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/devset/corpus_steps.sh
source "$here/bench/devset/corpus_steps.sh"
work="${1:-$here/build/devset-third}"
novelty="${2:-$here/build/cpu/novelty}"
[ -x "$novelty" ] || novelty="$here/build/auto/novelty"
data="${NOVELTY_DATA:-$here/../shared/data}"
mkdir -p "$work"
build() { python3 "$here/bench/devset/build_devset.py" --ml "$data/ml_papers_paperlists.jsonl.gz" \
  --biomed "$data/biomed_synergy_openalex.jsonl.gz" "$@"; }

# The first two sets, by their scripts' exact flags, only for their labels: the third draws none.
[ -f "$work/first/devset.json" ] || build --out "$work/first"
[ -f "$work/second/devset.json" ] || build --out "$work/second" --seed 2026 --ml-corpus-size 6937 \
  --biomed-corpus-size 0 --exclude-labels "$work/first/labels.jsonl"
[ -f "$work/set/devset.json" ] || build --out "$work/set" --seed 2019 --ml-positive-venues cvpr,iccv,icml \
  --ml-positive-year 2019 --ml-positives 255 --ml-corpus-size 6937 --biomed-corpus-size 0 \
  --exclude-labels "$work/first/labels.jsonl" "$work/second/labels.jsonl"
# The pre-registered counts, and no label shared with the first two sets.
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def ids(name):
    with open("%s/%s/labels.jsonl" % (work, name)) as f:
        return [json.loads(line)["id"] for line in f if line.strip()]
counts = json.load(open(work + "/set/devset.json"))["counts"]
for key in ("ml_positives", "ml_negatives", "biomed_positives", "biomed_negatives"):
    if counts[key] != 255:
        sys.exit("third set: %s is %d, not the pre-registered 255" % (key, counts[key]))
shared = set(ids("set")) & (set(ids("first")) | set(ids("second")))
if shared:
    sys.exit("third set: %d labels shared with the first two sets" % len(shared))
print("third set: 255 ideas per class and field, none a label of the first two sets; corpus %d + %d"
      % (counts["ml_corpus"], counts["biomed_corpus"]))
PY
devset_corpus "$work" "$novelty"
[ "${EMBED_ONLY:-0}" = 1 ] && exit 0

# The pre-registered grid (the second set's) and comparisons (docs/devset.md, "The third set").
# C2 = rnd[euclid,P=1500,Q=10] is the one confirmatory candidate.
"$novelty" eval sweep --corpus "$work/corpus" --ideas "$work/set/ideas.jsonl" --labels "$work/set/labels.jsonl" \
  --group-by field --p 50,100,200,300,500,700,1000,1150,1500 --q 5,10,20,50 --hd 1,3,5,10,20 \
  --densities cos,euclid --bootstrap 1000 --seed 1 --folds 5 \
  --paired "rnd[euclid,P=1500,Q=10]:rnd[cos,P=100,Q=50],rnd[euclid,P=1500,Q=10]:hd[n=5],rnd[cos,P=500,Q=5]:rnd[cos,P=100,Q=50],rnd[cos,P=500,Q=5]:hd[n=5],rnd[euclid,P=1500,Q=10]:rnd[cos,P=1500,Q=10],rnd[cos,P=1500,Q=5]:rnd[cos,P=500,Q=5]" \
  --out "$work/sweep.json" --plot "$work/sweep.svg" | tee "$work/sweep.txt"
