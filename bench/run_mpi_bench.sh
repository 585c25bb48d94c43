#!/usr/bin/env bash
# The sharded index on this machine: one process of one thread against two MPI ranks of one
# thread each, for a search (10,000 x 200,000 x 384, k = 10, the CLI end to end) and a self-join
# (`novelty index` on a date prefix of the same corpus), alternating three times. Checks that
# both write the same bytes, and prints the wall times, their ratio, and from NOVELTY_MPI_PROFILE
# each rank's compute seconds, seconds inside MPI and bytes sent. Results go to docs/scaling.md
# by hand, with the date and how loaded the machine was (the load averages printed first and last).
# Environment: N_CORPUS, N_QUERIES, JOIN_CUTOFF (a year), RUNS, BENCH_PYTHON (a Python with numpy;
# default: bench/.venv with bench/requirements.txt), MPI_BENCH_DIR (data and outputs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n_corpus="${N_CORPUS:-200000}"
n_queries="${N_QUERIES:-10000}"
join_cutoff="${JOIN_CUTOFF:-2004}"
runs="${RUNS:-3}"
work="${MPI_BENCH_DIR:-$here/build/mpi-bench}"
py="${BENCH_PYTHON:-}"
if [ -z "$py" ]; then
  venv="$here/bench/.venv"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements.txt"
  py="$venv/bin/python"
fi
[ -x "$here/build/cpu/novelty" ] || "$here/scripts/build.sh" cpu >/dev/null
novelty="$here/build/cpu/novelty"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --oversubscribe --bind-to none -np 2)

mkdir -p "$work"
corpus="$work/corpus"
if [ ! -f "$corpus/manifest.json" ]; then
  "$py" "$here/bench/make_mpi_bench_data.py" --n-corpus "$n_corpus" --n-queries "$n_queries" --out "$work"
  "$novelty" corpus import -q --overwrite --in "$work/papers.jsonl" --out "$corpus"
  "$novelty" corpus add-vectors -q "$corpus" --vectors "$work/corpus.npy"
fi

echo "load before: $(cat /proc/loadavg)"
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
rm -f "$work/profile.jsonl" "$work/times.txt"
for run in $(seq "$runs"); do
  t0=$(now); "$novelty" search --corpus "$corpus" --queries "$work/queries.npy" --k 10 --threads 1 -q --out "$work/one.npz"
  t1=$(now); NOVELTY_MPI_PROFILE="$work/profile.jsonl" "${mpirun[@]}" "$novelty" search --corpus "$corpus" \
    --queries "$work/queries.npy" --k 10 --threads 1 -q --out "$work/two.npz"
  t2=$(now)
  cmp "$work/one.npz" "$work/two.npz"
  echo "search $run $(ms "$t0" "$t1") $(ms "$t1" "$t2")" >> "$work/times.txt"
  rm -rf "$corpus/cache"
  t0=$(now); "$novelty" index "$corpus" --q 50 --cutoff "$join_cutoff" --threads 1 -q > /dev/null
  cp "$corpus"/cache/selfjoin-*.bin "$work/one.bin"; rm -rf "$corpus/cache"
  t1=$(now); NOVELTY_MPI_PROFILE="$work/profile.jsonl" "${mpirun[@]}" "$novelty" index "$corpus" --q 50 \
    --cutoff "$join_cutoff" --threads 1 -q > /dev/null
  t2=$(now)
  cmp "$work/one.bin" "$corpus"/cache/selfjoin-*.bin
  rm -rf "$corpus/cache"
  echo "self_join $run $(ms "$t0" "$t1") $(ms "$t1" "$t2")" >> "$work/times.txt"
done
echo "load after: $(cat /proc/loadavg)"
"$py" - "$work/times.txt" "$work/profile.jsonl" <<'PY'
import json, statistics, sys
times = {}
for line in open(sys.argv[1]):
    op, _, one, two = line.split()
    times.setdefault(op, []).append((float(one) / 1000, float(two) / 1000))
calls = [json.loads(line) for line in open(sys.argv[2])]
print("| work | 1 rank x 1 thread | 2 ranks x 1 thread | speed-up | per call: compute s per rank | MPI s per rank | bytes sent per rank |")
print("|---|---|---|---|---|---|---|")
for op, pairs in times.items():
    one = statistics.median(p[0] for p in pairs)
    two = statistics.median(p[1] for p in pairs)
    mine = [c for c in calls if c["op"] == op]
    n_runs = len(pairs)
    compute = [sum(c["per_rank"][r]["compute_s"] for c in mine) / n_runs for r in range(2)]
    comm = [sum(c["per_rank"][r]["comm_s"] for c in mine) / n_runs for r in range(2)]
    sent = [sum(c["per_rank"][r]["bytes_sent"] for c in mine) / n_runs for r in range(2)]
    print(f"| {op} | {one:.2f} s {[round(p[0], 2) for p in pairs]} | {two:.2f} s {[round(p[1], 2) for p in pairs]} | "
          f"{one / two:.2f}x | {compute[0]:.2f} / {compute[1]:.2f} | {comm[0]:.2f} / {comm[1]:.2f} | "
          f"{sent[0] / 1e6:.1f} / {sent[1] / 1e6:.1f} MB |")
PY
