#!/usr/bin/env bash
# P/Q sensitivity of RND on a labelled idea set, in the shape of the RND paper's Tables 10 and 11:
# AUROC for several P with Q = 50, and for several Q with P = 100.
#   bench/pq_sweep.sh CORPUS_DIR IDEAS.jsonl LABELS.jsonl [novelty binary]
# Example on the demo data (labels: the ideas' authors' own close/far judgement, see data/README.md):
#   bench/pq_sweep.sh build/demo-corpus data/ideas.jsonl data/idea_labels.jsonl
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
corpus="$1" ideas="$2" labels="$3"
novelty="${4:-$here/build/auto/novelty}"
[ -x "$novelty" ] || novelty="$here/build/cpu/novelty"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

auroc() {  # p q -> "AUROC [lo, hi]" of rnd over all ideas
  "$novelty" score -q --corpus "$corpus" --ideas "$ideas" --p "$1" --q "$2" --methods rnd --out "$work/s.jsonl"
  "$novelty" eval auroc --scores "$work/s.jsonl" --labels "$labels" --methods rnd --json 2>/dev/null |
    python3 -c 'import json,sys; a=json.load(sys.stdin)["auroc"]["all"]["rnd"]; print("%.3f [%.3f, %.3f]" % (a["value"], a["ci95"][0], a["ci95"][1]) if a["value"] is not None else "n/a")'
}

echo "AUROC of RND for P (Q = 50), as Table 10:"
echo "| P | AUROC [95% CI] |"
echo "|---|---|"
for p in 10 20 50 100 200; do echo "| $p | $(auroc "$p" 50) |"; done
echo
echo "AUROC of RND for Q (P = 100), as Table 11:"
echo "| Q | AUROC [95% CI] |"
echo "|---|---|"
for q in 10 20 50 100 200; do echo "| $q | $(auroc 100 "$q") |"; done
