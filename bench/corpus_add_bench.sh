#!/usr/bin/env bash
# The cost of `novelty corpus add` (1% and 10% more papers, with their vectors, dated among the
# old ones so that rows are renumbered) against a full `novelty index` of the corpus, on the CPU.
# Usage: bench/corpus_add_bench.sh [path/to/novelty]
#   NOVELTY_BENCH_ADD_PAPERS (default 100000) papers, NOVELTY_BENCH_ADD_DIM (default 64) dims,
#   NOVELTY_BENCH_ADD_Q (default 50).
# Prints one markdown table row per addition: wall seconds of the add (papers.sqlite rebuilt,
# vectors copied, the density cache updated) and its ratio to the full index.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
novelty="${1:-$here/build/cpu/novelty}"
[ -x "$novelty" ] || { echo "bench: build first (scripts/build.sh cpu), or pass the novelty binary" >&2; exit 2; }
n="${NOVELTY_BENCH_ADD_PAPERS:-100000}"
dim="${NOVELTY_BENCH_ADD_DIM:-64}"
q="${NOVELTY_BENCH_ADD_Q:-50}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

seconds() { awk -F': ' '/Elapsed \(wall clock\)/{n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$1"; }

python3 "$here/bench/gen_s2.py" "$work/base-in" "$n" --dim "$dim" --shards 2 --seed 1
"$novelty" corpus import -q --format s2 --in "$work"/base-in/*.gz --out "$work/base" >/dev/null
/usr/bin/time -v "$novelty" index -q --device cpu --q "$q" "$work/base" >/dev/null 2>"$work/index.time"
index_s=$(seconds "$work/index.time")

echo "| papers | dim | q | added | full index (s) | corpus add (s) | add / index | of which cache update (s) | cache update / index | rows searched |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for pct in 1 10; do
  added=$((n * pct / 100))
  python3 "$here/bench/gen_s2.py" "$work/add$pct-in" "$added" --dim "$dim" --shards 1 --first $((n + 1)) --seed $((pct + 7))
  cp -r "$work/base" "$work/c$pct"
  /usr/bin/time -v "$novelty" corpus add -q "$work/c$pct" --format s2 --in "$work"/add$pct-in/*.gz \
      >"$work/add$pct.out" 2>"$work/add$pct.time"
  add_s=$(seconds "$work/add$pct.time")
  searched=$(sed -n 's/.*updated: \([0-9,]*\) rows\{0,1\} searched again.*/\1/p' "$work/add$pct.out")
  cache_s=$(sed -n 's/^caches updated in \([0-9.]*\) s$/\1/p' "$work/add$pct.out")
  printf '| %s | %s | %s | %s%% (%s) | %.1f | %.1f | %.1f%% | %.2f | %.1f%% | %s |\n' "$n" "$dim" "$q" "$pct" "$added" \
      "$index_s" "$add_s" "$(awk -v a="$add_s" -v b="$index_s" 'BEGIN{print 100 * a / b}')" "$cache_s" \
      "$(awk -v a="$cache_s" -v b="$index_s" 'BEGIN{print 100 * a / b}')" "$searched"
  rm -rf "$work/c$pct" "$work/add$pct-in"
done
