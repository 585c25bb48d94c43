#!/usr/bin/env bash
# What the triage cascade saves: its verdicts and LLM calls against checking every idea, with
# offline ClaimNov stages and the fake LLM (tests/fake_llm_server.hpp, built as bench/fake_llm) as
# the verdict judge, so every check costs one counted LLM call. On the demo ideas and on 1,000
# generated paraphrased and mixed ideas (bench/make_triage_ideas.py).
# Usage: bench/run_triage_eval.sh [BAND] (default: the triage default). Results go to
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

for set in demo generated; do
  ideas="$here/data/ideas.jsonl"
  [ "$set" = generated ] && ideas="$work/generated.jsonl"
  common=(--corpus "$corpus" --llm offline --cache none -q)
  ref_calls=$(with_fake_llm "$novelty" claims "${common[@]}" --proposals "$ideas" --out "$work/$set.reference.jsonl")
  rm -f "$work/$set.all.jsonl"
  with_fake_llm "$novelty" triage "${common[@]}" --device cpu --ideas "$ideas" --select all \
    --out "$work/$set.all.jsonl" >/dev/null
  band_flag=()
  [ -n "$band" ] && band_flag=(--band "$band")
  cascade_calls=$(with_fake_llm "$novelty" triage "${common[@]}" --device cpu --ideas "$ideas" "${band_flag[@]}" \
    --out "$work/$set.cascade.jsonl")
  python3 "$here/bench/triage_eval.py" --label "$set" --reference "$work/$set.reference.jsonl" \
    --all "$work/$set.all.jsonl" --cascade "$work/$set.cascade.jsonl" \
    --reference-calls "$ref_calls" --cascade-calls "$cascade_calls" --sweep > "$work/$set.report.md"
  head -2 "$work/$set.report.md"
done
