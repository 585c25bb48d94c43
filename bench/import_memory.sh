#!/usr/bin/env bash
# Peak memory and wall time of `novelty corpus import` on the real corpora in ../shared/data,
# and on generated Semantic Scholar-style shards (papers, abstracts and embeddings of
# NOVELTY_BENCH_S2_PAPERS papers, default 1,000,000, vectors of NOVELTY_BENCH_S2_DIM, default 64,
# dimensions; bench/gen_s2.py), measured with GNU time -v.
# Usage: bench/import_memory.sh [path/to/novelty]   (NOVELTY_BENCH_ONLY=s2 runs the s2 row alone)
# Prints one table row per corpus, in the format of docs/benchmarks.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
novelty="${1:-$here/build/cpu/novelty}"
data="${NOVELTY_SHARED_DATA:-$here/../shared/data}"
[ -x "$novelty" ] || { echo "bench: build first (scripts/build.sh cpu), or pass the novelty binary" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

run() {  # name format field file...
  local name="$1" format="$2" field="$3"
  shift 3
  local field_flag=()
  [ -n "$field" ] && field_flag=(--field "$field")
  # --skip-invalid: the biomedical file lists one work twice with different synergy_set values,
  # which a strict import refuses (a repeated id with other content).
  /usr/bin/time -v "$novelty" corpus import -q --skip-invalid --format "$format" "${field_flag[@]}" --in "$@" \
      --out "$work/$name" >"$work/$name.out" 2>"$work/$name.time"
  local rss_kb wall papers sqlite_mb
  rss_kb=$(awk -F': ' '/Maximum resident set size/{print $2}' "$work/$name.time")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$work/$name.time")
  papers=$("$novelty" corpus info "$work/$name" | awk '/^papers/{sub(/^papers +/, ""); print}')
  sqlite_mb=$(du -m "$work/$name/papers.sqlite" | cut -f1)
  printf '| %s | %s | %s | %d MB | %s MB |\n' "$name" "$papers" "$wall" $((rss_kb / 1024)) "$sqlite_mb"
}

echo "| corpus | papers | wall (m:ss) | peak RSS | papers.sqlite |"
echo "|---|---|---|---|---|"
if [ "${NOVELTY_BENCH_ONLY:-}" != s2 ]; then
  run ml_papers_paperlists paperlists ml "$data/ml_papers_paperlists.jsonl.gz"
  run biomed_synergy_openalex openalex biomed "$data/biomed_synergy_openalex.jsonl.gz"
fi
s2_papers="${NOVELTY_BENCH_S2_PAPERS:-1000000}"
python3 "$here/bench/gen_s2.py" "$work/s2-input" "$s2_papers" --dim "${NOVELTY_BENCH_S2_DIM:-64}" --shards 8
run "s2_generated_${s2_papers}" s2 "" "$work"/s2-input/*.jsonl.gz
rm -rf "$work/s2-input"
