#!/usr/bin/env bash
# The development set's RND AUROC at each precision of the CPU encoder (docs/encoder.md's bar: within
# 0.003 of float32's). Builds the set of docs/devset.md (default sizes) unless WORK/set holds one,
# imports its corpus once, then for each precision embeds the corpus and scores the ideas with the
# built-in encoder at that precision (`corpus embed --precision P`, `score --precision P`), and
# compares the AUROCs (`eval auroc`) with bench/devset/precision_auroc.py, which appends one dated
# JSON line to bench/results/ and exits 1 when a precision is off by more than the tolerance.
#   bench/run_devset_precision.sh [WORK_DIR] [novelty binary]
# PRECISIONS (default f32,bf16,int8; f32 first, the reference), THREADS (default: all cores),
# DEVSET_FLAGS (extra builder flags). Every step is skipped when its output is there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$here/build/devset-precision}"
novelty="${2:-$here/build/cpu/novelty}"
data="${NOVELTY_DATA:-$here/../shared/data}"
precisions="${PRECISIONS:-f32,bf16,int8}"
threads=()
[ -n "${THREADS:-}" ] && threads=(--threads "$THREADS")
mkdir -p "$work"

if [ ! -f "$work/set/devset.json" ]; then
  python3 "$here/bench/devset/build_devset.py" --ml "$data/ml_papers_paperlists.jsonl.gz" \
    --biomed "$data/biomed_synergy_openalex.jsonl.gz" --out "$work/set" ${DEVSET_FLAGS:-}
fi
if [ ! -f "$work/imported/manifest.json" ]; then
  rm -rf "$work/imported"
  "$novelty" corpus import -q --format paperlists openalex --field ml biomed \
    --in "$work/set/ml_corpus.jsonl" "$work/set/biomed_corpus.jsonl" --out "$work/imported"
fi
for p in ${precisions//,/ }; do
  dir="$work/$p"
  if [ ! -f "$dir/corpus/vectors.npy" ]; then
    rm -rf "$dir" && mkdir -p "$dir" && cp -r "$work/imported" "$dir/corpus"
    start=$(date +%s)
    "$novelty" corpus embed -q "$dir/corpus" --precision "$p" "${threads[@]}"
    echo "$p: embedded the corpus in $(( $(date +%s) - start )) s"
  fi
  if [ ! -f "$dir/auroc.json" ]; then
    "$novelty" score -q --corpus "$dir/corpus" --ideas "$work/set/ideas.jsonl" --precision "$p" "${threads[@]}" \
      --out "$dir/scores.jsonl"
    "$novelty" eval auroc --scores "$dir/scores.jsonl" --labels "$work/set/labels.jsonl" --group-by field \
      --bootstrap 200 --json --out "$dir/auroc.json" > /dev/null
  fi
done
exec python3 "$here/bench/devset/precision_auroc.py" --work "$work" --precisions "$precisions" \
  --results "$here/bench/results/$(date -u +%Y-%m-%d)-devset-precision.jsonl"
