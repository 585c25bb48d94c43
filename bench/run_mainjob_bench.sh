#!/usr/bin/env bash
# The main job, whole process, on 2 threads: `novelty score` (default, and each forced density
# path) against the FAISS IndexFlatIP + numpy script a user would write first, side by side in
# one run (bench/mainjob_bench.py, bench/mainjob_faiss_peer.py). The corpus is the 87,691-paper
# ML corpus (../shared/data, or $NOVELTY_ML_PAPERS), embedded once by the engine and cached in
# $NOVELTY_BENCH_CACHE (default ~/.cache/novelty-bench); its papers get day dates (the year from
# the data, the day from a hash of the record) so that per-idea cutoffs can be as fine as
# ScholarCatalyst's. Results are appended to bench/results/DATE-mainjob.jsonl.
# Usage: bench/run_mainjob_bench.sh [--ideas 20000,50000] [--cutoffs 0,20] [--threads 2]
#          [--paths default,on-demand,self-join] [--text title+abstract|title]
#   --text title embeds titles only (about 15x faster to embed; the vectors are then MiniLM
#   vectors of titles, not of the papers as the engine's default embeds them).
#   NOVELTY_BENCH_VECTORS=X.npy NOVELTY_BENCH_VECTOR_IDS=ids.txt attach vectors of the same papers
#   made elsewhere (row i of X is the paper named on line i) instead of embedding.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ideas=20000,50000
cutoffs=0,20
threads=2
paths=default,on-demand,self-join
text=title+abstract
while [ $# -gt 0 ]; do
  case "$1" in
    --ideas) ideas="$2"; shift 2 ;;
    --cutoffs) cutoffs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --paths) paths="$2"; shift 2 ;;
    --text) text="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$text" in title|title+abstract) ;; *) echo "--text must be title or title+abstract" >&2; exit 2 ;; esac
venv="$here/bench/.venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/bench/requirements.txt"
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || NOVELTY_BUILD_TARGETS=novelty "$here/scripts/build.sh" cpu >/dev/null
novelty="$here/build/cpu/novelty"
papers="${NOVELTY_ML_PAPERS:-$here/../shared/data/ml_papers_paperlists.jsonl.gz}"
cache="${NOVELTY_BENCH_CACHE:-$HOME/.cache/novelty-bench}/mainjob-$text"
corpus="$cache/corpus"
mkdir -p "$cache"
if [ ! -f "$corpus/vectors.npy" ]; then
  "$venv/bin/python" - "$papers" "$cache/papers.jsonl" "$text" <<'PY'
import gzip, hashlib, json, sys
src, out, text = sys.argv[1], sys.argv[2], sys.argv[3]
with gzip.open(src, "rt") as f, open(out + ".partial", "w") as w:
    for line in f:
        r = json.loads(line)
        day = int(hashlib.sha1(line.encode()).hexdigest(), 16) % 365
        month_days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        month = 0
        while day >= month_days[month]:
            day -= month_days[month]
            month += 1
        r["date"] = f"{r['year']}-{month + 1:02d}-{day + 1:02d}"
        if text == "title" and r.get("title"):
            r.pop("abstract", None)  # a record without a title keeps its abstract as its text
        w.write(json.dumps(r) + "\n")
import os
os.replace(out + ".partial", out)
PY
  "$novelty" corpus import -q --overwrite --format paperlists --in "$cache/papers.jsonl" --out "$corpus" >/dev/null
  if [ -n "${NOVELTY_BENCH_VECTORS:-}" ]; then
    "$novelty" corpus add-vectors -q "$corpus" --vectors "$NOVELTY_BENCH_VECTORS" --ids "$NOVELTY_BENCH_VECTOR_IDS" >/dev/null
  else
    resume=()
    [ -f "$corpus/embed.partial.json" ] && resume=(--resume)
    "$novelty" corpus embed "$corpus" --threads "$threads" "${resume[@]}"
  fi
fi
results="$here/bench/results/$(date +%F)-mainjob.jsonl"
"$venv/bin/python" "$here/bench/mainjob_bench.py" --novelty "$novelty" --corpus "$corpus" \
  --work "${NOVELTY_BENCH_WORK:-/tmp/novelty-mainjob-bench}" --results "$results" --ideas "$ideas" \
  --cutoffs "$cutoffs" --paths "$paths" --threads "$threads" --text "$text" --python "$venv/bin/python"
echo "results appended to $results" >&2
