# Shared steps of the devset run scripts (bench/run_devset_*.sh), sourced by them: the corpus of a
# built set imported and embedded with the built-in encoder, each step skipped when its output is
# there, an interrupted embedding resumed.
#   devset_corpus WORK NOVELTY    (WORK/set holds the builder's output; writes WORK/corpus)
devset_corpus() {
  local work="$1" novelty="$2"
  if [ ! -f "$work/corpus/manifest.json" ]; then
    rm -rf "$work/corpus"
    "$novelty" corpus import --format paperlists openalex --field ml biomed \
      --in "$work/set/ml_corpus.jsonl" "$work/set/biomed_corpus.jsonl" --out "$work/corpus"
  fi
  if [ ! -f "$work/corpus/vectors.npy" ]; then
    local start resume=""
    start=$(date +%s)
    [ -f "$work/corpus/embed.partial.json" ] && resume="--resume"  # an interrupted embedding's batches
    "$novelty" corpus embed "$work/corpus" $resume 2>&1 | tr '\r' '\n' | tail -n 2
    echo "embedding took $(( $(date +%s) - start )) s"
  fi
}
