#!/usr/bin/env bash
# The cost of `novelty corpus add` (1% and 10% more papers, with their vectors) against a full
# `novelty index` of the corpus, on the CPU, in two cases: the new papers dated among the old
# ones (rows renumbered) and dated after them (appended).
# Usage: bench/corpus_add_bench.sh [path/to/novelty]
#   NOVELTY_BENCH_ADD_PAPERS (default 100000) papers, NOVELTY_BENCH_ADD_DIM (default 64) dims,
#   NOVELTY_BENCH_ADD_Q (default 50), NOVELTY_BENCH_ADD_PCTS (default "1 10"),
#   NOVELTY_BENCH_ADD_CASES (default "among append"),
#   NOVELTY_BENCH_ADD_WORK: a folder kept between runs (default: a temporary one, removed);
#   generated inputs and the indexed base corpus found there are reused, so that one long full
#   index serves several runs; remove WORK/index.time to time the index again (the import is
#   kept unless WORK/import.time is removed too).
# Prints one markdown table row per addition: wall and CPU (user+sys) seconds of the full index
# and of the add, their ratios, and the add's own split (papers.sqlite, density cache update).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
novelty="${1:-$here/build/cpu/novelty}"
[ -x "$novelty" ] || { echo "bench: build first (scripts/build.sh cpu), or pass the novelty binary" >&2; exit 2; }
n="${NOVELTY_BENCH_ADD_PAPERS:-100000}"
dim="${NOVELTY_BENCH_ADD_DIM:-64}"
q="${NOVELTY_BENCH_ADD_Q:-50}"
pcts="${NOVELTY_BENCH_ADD_PCTS:-1 10}"
cases="${NOVELTY_BENCH_ADD_CASES:-among append}"
if [ -n "${NOVELTY_BENCH_ADD_WORK:-}" ]; then
  work="$NOVELTY_BENCH_ADD_WORK"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

. "$here/bench/time_v.sh"  # wall, cpu, peak_mb
pct_of() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f%%", 100 * a / b}'; }

[ -d "$work/base-in" ] || python3 "$here/bench/gen_s2.py" "$work/base-in" "$n" --dim "$dim" --shards 8 --seed 1
# Without index.time the full index runs again (on the imported base kept from an earlier run, its
# cache removed first), so that the ratio is to an index measured in the same run.
if [ ! -s "$work/index.time" ]; then
  if [ ! -s "$work/import.time" ] || [ ! -f "$work/base/manifest.json" ]; then
    rm -rf "$work/base"
    /usr/bin/time -v "$novelty" corpus import -q --format s2 --in "$work"/base-in/*.gz --out "$work/base" >/dev/null 2>"$work/import.time"
  fi
  rm -rf "$work/base/cache"
  /usr/bin/time -v "$novelty" index -q --device cpu --q "$q" "$work/base" >/dev/null 2>"$work/index.time"
fi
index_wall=$(wall "$work/index.time")
index_cpu=$(cpu "$work/index.time")

echo "| papers | dim | q | added | dated | full index wall / CPU (s) | corpus add wall / CPU (s) | add / index wall | add / index CPU | papers.sqlite (s) | cache update (s) | cache update / index wall | rows searched |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for case in $cases; do
  for pct in $pcts; do
    added=$((n * pct / 100))
    in="$work/add$pct-$case"
    if [ ! -d "$in" ]; then
      if [ "$case" = append ]; then
        python3 "$here/bench/gen_s2.py" "$in" "$added" --dim "$dim" --shards 1 --first $((n + 1)) --seed $((pct + 8)) --years 2025-2026
      else
        python3 "$here/bench/gen_s2.py" "$in" "$added" --dim "$dim" --shards 1 --first $((n + 1)) --seed $((pct + 7))
      fi
    fi
    rm -rf "$work/c"
    cp -r "$work/base" "$work/c"
    sync  # the copy's writeback is the bench's own work, not the add's
    /usr/bin/time -v "$novelty" corpus add -q "$work/c" --format s2 --in "$in"/*.gz \
        >"$work/add$pct-$case.out" 2>"$work/add$pct-$case.time"
    add_wall=$(wall "$work/add$pct-$case.time")
    add_cpu=$(cpu "$work/add$pct-$case.time")
    searched=$(sed -n 's/.*updated: \([0-9,]*\) rows\{0,1\} searched again.*/\1/p' "$work/add$pct-$case.out")
    cache_s=$(sed -n 's/^caches updated in \([0-9.]*\) s$/\1/p' "$work/add$pct-$case.out")
    papers_s=$(sed -n 's/^papers.sqlite \(updated\|rebuilt from every paper\) in \([0-9.]*\) s.*/\2/p' "$work/add$pct-$case.out")
    printf '| %s | %s | %s | %s%% (%s) | %s | %.1f / %.1f | %.1f / %.1f | %s | %s | %.2f | %.2f | %s | %s |\n' \
        "$n" "$dim" "$q" "$pct" "$added" "$case" "$index_wall" "$index_cpu" "$add_wall" "$add_cpu" \
        "$(pct_of "$add_wall" "$index_wall")" "$(pct_of "$add_cpu" "$index_cpu")" "$papers_s" "$cache_s" \
        "$(pct_of "$cache_s" "$index_wall")" "$searched"
    rm -rf "$work/c"
  done
done
