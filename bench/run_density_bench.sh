#!/usr/bin/env bash
# Time to the first scores of 1,000 ideas with densities on demand (the density store) from a
# corpus never indexed, with no cutoff and with 1,000 distinct cutoffs, each followed by a second
# run; against `novelty index` (the full self-join) + scoring with its cache, today's path.
# Usage: bench/run_density_bench.sh WORK_DIR [N_PAPERS] [path/to/build]
#   N_PAPERS (default 1000000) clustered 384-d papers dated over 30 years (1995-2024), 1,000 ideas
#   from the same mixture (bench/make_density_bench_data.py). Inputs and the imported corpus in
#   WORK_DIR are reused between runs.
#   NOVELTY_BENCH_DENS_INDEX=1 also times `novelty index` of the whole corpus (a full self-join:
#   about an hour at 1M rows on 2 cores) and scoring the no-cutoff ideas from its cache.
#   NOVELTY_BENCH_DENS_THREADS (default: all cores).
#   NOVELTY_BENCH_DENS_STORAGES (default "f32"): the CPU index storages the on-demand runs use, in
#   turn (f32 bf16 int8: the narrow ones give the same scores, faster).
# Prints the JSON lines of bench/density_bench (one per run) and, with the index, its time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$1"
n="${2:-1000000}"
build="${3:-$here/build/cpu}"
threads="${NOVELTY_BENCH_DENS_THREADS:-0}"
novelty="$build/novelty"
bench="$build/bench/density_bench"
[ -x "$novelty" ] && [ -x "$bench" ] || { echo "bench: build first (scripts/build.sh cpu)" >&2; exit 2; }
data="$work/data-$n"
corpus="$work/corpus-$n"
mkdir -p "$work"
python="$here/.venv/bin/python"  # numpy (scripts/setup.sh installs it there)
[ -x "$python" ] || python=python3
[ -f "$data/ideas.npy" ] || "$python" "$here/bench/make_density_bench_data.py" "$data" "$n"
if [ ! -f "$corpus/manifest.json" ]; then
  "$novelty" corpus import -q --in "$data/papers.jsonl" --out "$corpus"
  "$novelty" corpus add-vectors -q "$corpus" --vectors "$data/vectors.npy" --ids "$data/ids.txt"
fi
. "$here/bench/time_v.sh"  # wall, cpu, peak_mb
clear_store() { rm -rf "$corpus/cache"; }

for storage in ${NOVELTY_BENCH_DENS_STORAGES:-f32}; do
  for cutoffs in none distinct; do
    clear_store
    "$bench" "$corpus" "$data/ideas.npy" --cutoffs "$cutoffs" --threads "$threads" --runs 2 --storage "$storage"
  done
done
ls -l "$corpus/cache"
if [ "${NOVELTY_BENCH_DENS_INDEX:-0}" = 1 ]; then
  clear_store
  /usr/bin/time -v "$novelty" index "$corpus" --q 50 --threads "$threads" -q 2> "$work/index-$n.time"
  echo "{\"novelty_index_seconds\": $(wall "$work/index-$n.time"), \"corpus_rows\": $n}"
  # Scoring from the index's cache: every no-cutoff density is served by it.
  "$bench" "$corpus" "$data/ideas.npy" --cutoffs none --threads "$threads" --runs 1
fi
