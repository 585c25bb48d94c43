#!/usr/bin/env bash
# What the triage cascade saves: its verdicts and LLM calls against checking every idea, with
# offline ClaimNov stages and the fake LLM (tests/fake_llm_server.hpp, built as bench/fake_llm) as
# the verdict judge, so every check costs one counted LLM call. On the demo ideas and on 1,000
# generated paraphrased and mixed ideas (bench/make_triage_ideas.py).
# Usage: bench/run_triage_eval.sh [BAND] (the nearest gate's band; default: the triage default).
# A second generated set (seed 8, "heldout") checks the default band away from the set it was
# chosen on. Results go to
# docs/benchmarks.md by hand. The first run extracts the demo corpus's pool claims (minutes).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
band="${1:-}"
"$here/scripts/build.sh" cpu >/dev/null
novelty="$here/build/cpu/novelty"
corpus="$here/build/demo-corpus-cpu"
work="$here/build/triage-eval"
mkdir -p "$work"
if [ ! -f "$corpus/manifest.json" ] || ! grep -q '"embedder"' "$corpus/manifest.json"; then
  "$novelty" corpus import --overwrite -q --format paperlists openalex --field ml biomed \
    --in "$here/data/demo/ml_papers_demo.jsonl.gz" "$here/data/demo/biomed_demo.jsonl.gz" --out "$corpus"
  "$novelty" corpus add-vectors "$corpus" -q --vectors "$here/data/demo/vectors_minilm_f16.npy" \
    --ids "$here/data/demo/vector_ids.txt" --embedder all-MiniLM-L6-v2 --pooling mean
fi
python3 "$here/bench/make_triage_ideas.py" --papers "$here/data/demo/ml_papers_demo.jsonl.gz" \
  --ideas "$here/data/ideas.jsonl" --n 1000 --out "$work/generated.jsonl"

# Runs one command against a fresh fake LLM and prints the number of LLM calls it answered.
with_fake_llm() {
  local log="$work/fake_llm.log"
  coproc FAKE { exec "$here/build/cpu/bench/fake_llm" 2>"$log"; }
  local url
  read -r url <&"${FAKE[0]}"
  "$@" --judge "$url" --llm-model fake >/dev/null
  kill -TERM "$FAKE_PID"
  wait "$FAKE_PID" || true
  sed -n 's/.*answered \([0-9]*\) requests.*/\1/p' "$log"
}

python3 "$here/bench/make_triage_ideas.py" --papers "$here/data/demo/ml_papers_demo.jsonl.gz" \
  --ideas "$here/data/ideas.jsonl" --n 1000 --seed 8 --out "$work/heldout.jsonl"

# Per set: the reference (novelty claims on every idea) and triage --select all (for replaying any
# band) are kept between runs of this script; delete build/triage-eval to redo them.
for set in demo generated heldout; do
  ideas="$here/data/ideas.jsonl"
  [ "$set" != demo ] && ideas="$work/$set.jsonl"
  common=(--corpus "$corpus" --llm offline --cache none -q)
  if [ ! -f "$work/$set.reference.jsonl" ] || [ ! -f "$work/$set.reference.calls" ]; then
    with_fake_llm "$novelty" claims "${common[@]}" --proposals "$ideas" --out "$work/$set.reference.jsonl" \
      > "$work/$set.reference.calls"
  fi
  if [ ! -f "$work/$set.all.jsonl" ]; then
    with_fake_llm "$novelty" triage "${common[@]}" --device cpu --ideas "$ideas" --select all \
      --out "$work/$set.all.jsonl" >/dev/null
  fi
  : > "$work/$set.report.md"
  for gate in nearest rnd; do
    band_flag=()
    [ -n "$band" ] && [ "$gate" = nearest ] && band_flag=(--band "$band")
    rm -f "$work/$set.cascade-$gate.jsonl"
    calls=$(with_fake_llm "$novelty" triage "${common[@]}" --device cpu --ideas "$ideas" --gate "$gate" \
      "${band_flag[@]}" --out "$work/$set.cascade-$gate.jsonl")
    sweep=()
    [ "$gate" = rnd ] && sweep=(--sweep)
    python3 "$here/bench/triage_eval.py" --label "$set, gate $gate" --reference "$work/$set.reference.jsonl" \
      --all "$work/$set.all.jsonl" --cascade "$work/$set.cascade-$gate.jsonl" \
      --reference-calls "$(cat "$work/$set.reference.calls")" --cascade-calls "$calls" "${sweep[@]}" \
      >> "$work/$set.report.md"
  done
  grep -v '^| \(rnd\|nearest\) ' "$work/$set.report.md" | grep -v '^| gate\|^|---'
done
