#!/usr/bin/env bash
# Densities on demand against a full index on a real embedded corpus (e.g. the shared ML corpus,
# docs/benchmarks.md): 1,000 of the corpus's own papers, drawn with a seed, as the ideas' vectors
# (so that the ideas sit where real papers do; with no cutoff each one also finds its own paper),
# time to their first scores from an empty density store with no cutoff and with each idea its own
# cutoff date, each followed by a second run; then `novelty index` (the full self-join) and scoring
# from its cache, today's path. The store is removed before each first run.
# Usage: bench/run_density_bench_corpus.sh CORPUS_DIR WORK_DIR [path/to/build]
#   CORPUS_DIR: an embedded corpus (`corpus import` + `corpus embed`).
#   NOVELTY_BENCH_DENS_FIRST_YEAR / _YEARS: the range of the cutoff dates (default 1990 and 36: the
#   ML file's years from the first in which a cutoff leaves the 100 papers P = 100 needs); NOVELTY_BENCH_DENS_THREADS (default: all cores); NOVELTY_BENCH_DENS_IDEAS (1000);
#   NOVELTY_BENCH_DENS_STORAGES (default "f32"): the CPU index storages of the on-demand runs, in
#   turn (f32 bf16 int8).
# Prints the JSON lines of bench/density_bench (one per run) and the index's time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
corpus="$1"
work="$2"
build="${3:-$here/build/cpu}"
threads="${NOVELTY_BENCH_DENS_THREADS:-0}"
first_year="${NOVELTY_BENCH_DENS_FIRST_YEAR:-1990}"
years="${NOVELTY_BENCH_DENS_YEARS:-36}"
n_ideas="${NOVELTY_BENCH_DENS_IDEAS:-1000}"
novelty="$build/novelty"
bench="$build/bench/density_bench"
[ -x "$novelty" ] && [ -x "$bench" ] || { echo "bench: build first (scripts/build.sh cpu)" >&2; exit 2; }
[ -f "$corpus/vectors.npy" ] || { echo "bench: $corpus has no vectors.npy (corpus embed it first)" >&2; exit 2; }
mkdir -p "$work"
python="$here/.venv/bin/python"  # numpy (scripts/setup.sh installs it there)
[ -x "$python" ] || python=python3
"$python" - "$corpus/vectors.npy" "$work/ideas.npy" "$n_ideas" <<'PY'
import sys
import numpy as np
vectors = np.load(sys.argv[1], mmap_mode="r")
rows = np.sort(np.random.default_rng(1).choice(len(vectors), int(sys.argv[3]), replace=False))
np.save(sys.argv[2], np.asarray(vectors[rows], dtype=np.float32))
PY
. "$here/bench/time_v.sh"  # wall, cpu, peak_mb
clear_store() { rm -rf "$corpus/cache"; }
rows=$("$python" -c "import numpy as np, sys; print(len(np.load(sys.argv[1], mmap_mode='r')))" "$corpus/vectors.npy")

for storage in ${NOVELTY_BENCH_DENS_STORAGES:-f32}; do
  clear_store
  "$bench" "$corpus" "$work/ideas.npy" --cutoffs none --threads "$threads" --runs 2 --storage "$storage"
  clear_store
  "$bench" "$corpus" "$work/ideas.npy" --cutoffs distinct --first-year "$first_year" --years "$years" \
    --threads "$threads" --runs 2 --storage "$storage"
done
ls -l "$corpus/cache"
clear_store
/usr/bin/time -v "$novelty" index "$corpus" --q 50 --threads "$threads" -q 2> "$work/index.time"
echo "{\"novelty_index_seconds\": $(wall "$work/index.time"), \"peak_rss_mb\": $(peak_mb "$work/index.time"), \"corpus_rows\": $rows}"
# Scoring from the index's cache: every no-cutoff density is served by it.
"$bench" "$corpus" "$work/ideas.npy" --cutoffs none --threads "$threads" --runs 1
