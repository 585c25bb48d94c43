#!/usr/bin/env bash
# The sharded index on this machine: one process of one thread against two MPI ranks of one
# thread each, for a search (10,000 x 200,000 x 384, k = 10, the CLI end to end) and a self-join
# (`novelty index` on a date prefix of the same corpus), alternating three times. Checks that
# both write the same bytes, and prints the wall times, their ratio, each process's CPU seconds
# (/usr/bin/time: what the run would take on an idle machine when others share it), and from
# NOVELTY_MPI_PROFILE each rank's compute CPU seconds, seconds inside MPI and bytes sent. Results
# go to docs/scaling.md by hand, with the date and how loaded the machine was (the load averages
# printed first and last).
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
# Each process's wall and CPU seconds (user + system) into FILE (one per rank: FILE.RANK).
timed() { /usr/bin/time -f "%e %U %S" -o "$1" "${@:2}"; }
per_rank() { "${mpirun[@]}" sh -c '/usr/bin/time -f "%e %U %S" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$@"; }
rm -f "$work/profile.jsonl" "$work/times.txt"
for run in $(seq "$runs"); do
  t0=$(now); timed "$work/cpu_one" "$novelty" search --corpus "$corpus" --queries "$work/queries.npy" --k 10 --threads 1 \
    -q --out "$work/one.npz"
  t1=$(now); NOVELTY_MPI_PROFILE="$work/profile.jsonl" per_rank "$work/cpu_two" "$novelty" search --corpus "$corpus" \
    --queries "$work/queries.npy" --k 10 --threads 1 -q --out "$work/two.npz"
  t2=$(now)
  cmp "$work/one.npz" "$work/two.npz"
  echo "search $run $(ms "$t0" "$t1") $(ms "$t1" "$t2") $(cat "$work/cpu_one" "$work"/cpu_two.* | tr "\n" " ")" >> "$work/times.txt"
  rm -rf "$corpus/cache"
  t0=$(now); timed "$work/cpu_one" "$novelty" index "$corpus" --q 50 --cutoff "$join_cutoff" --threads 1 -q > /dev/null
  cp "$corpus"/cache/selfjoin-*.bin "$work/one.bin"; rm -rf "$corpus/cache"
  t1=$(now); NOVELTY_MPI_PROFILE="$work/profile.jsonl" per_rank "$work/cpu_two" "$novelty" index "$corpus" --q 50 \
    --cutoff "$join_cutoff" --threads 1 -q > /dev/null
  t2=$(now)
  cmp "$work/one.bin" "$corpus"/cache/selfjoin-*.bin
  rm -rf "$corpus/cache"
  echo "self_join $run $(ms "$t0" "$t1") $(ms "$t1" "$t2") $(cat "$work/cpu_one" "$work"/cpu_two.* | tr "\n" " ")" >> "$work/times.txt"
done
echo "load after: $(cat /proc/loadavg)"
"$py" - "$work/times.txt" "$work/profile.jsonl" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    one_cpu = float(f[5]) + float(f[6])                     # wall user sys of the one process
    rank_cpu = [float(f[8 + 3 * r]) + float(f[9 + 3 * r]) for r in range(2)]
    rows.setdefault(f[0], []).append((int(f[2]) / 1000, int(f[3]) / 1000, one_cpu, max(rank_cpu), rank_cpu))
calls = [json.loads(line) for line in open(sys.argv[2])]
print("Wall clock (depends on the machine's load) and CPU seconds (what each process did; the slower rank")
print("bounds the run on an idle machine). Medians of the runs, all runs in brackets.")
print("| work | wall: 1 rank / 2 ranks | wall speed-up | CPU s: 1 rank / slower rank | CPU speed-up | "
      "per run, in the sharded calls: compute CPU s per rank | MPI s per rank | bytes sent per rank |")
print("|---|---|---|---|---|---|---|---|")
for op, runs in rows.items():
    med = lambda i: statistics.median(r[i] for r in runs)
    allr = lambda i: [round(r[i], 1) for r in runs]
    mine = [c for c in calls if c["op"] == op]
    n = len(runs)
    per = lambda key, r: sum(c["per_rank"][r][key] for c in mine) / n
    print(f"| {op} | {med(0):.1f} / {med(1):.1f} s {allr(0)} / {allr(1)} | {med(0) / med(1):.2f}x | "
          f"{med(2):.1f} / {med(3):.1f} s {allr(2)} / {allr(3)} | {med(2) / med(3):.2f}x | "
          f"{per('compute_cpu_s', 0):.1f} / {per('compute_cpu_s', 1):.1f} | {per('comm_s', 0):.2f} / {per('comm_s', 1):.2f} | "
          f"{per('bytes_sent', 0) / 1e6:.1f} / {per('bytes_sent', 1) / 1e6:.1f} MB |")
PY
