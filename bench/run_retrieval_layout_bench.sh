#!/usr/bin/env bash
# BM25 (and hybrid) retrieval speed on the keyed papers.sqlite layout (format version 2: records
# under a stable key, rows in a narrow table, the full-text index keyed by `key`) against format
# version 1 (a row-keyed papers table, the full-text index keyed by row) holding the same papers:
# the ML corpus is imported once, a copy is rewritten into version 1's layout by
# tests/fixtures/version_1_layout.sql (which tests/engine/corpus/corpus_add_sqlite_test.cpp uses
# too), and bench/retrieval_bench.cpp runs on each in turn, NOVELTY_BENCH_ROUNDS (default 3)
# times, alternating.
# Usage: bench/run_retrieval_layout_bench.sh [retrieval_bench flags, e.g. --queries 200]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${NOVELTY_SHARED_DATA:-$here/../shared/data}/ml_papers_paperlists.jsonl.gz"
work="${NOVELTY_BENCH_WORK:-/tmp/novelty-retrieval-layout-bench}"
rounds="${NOVELTY_BENCH_ROUNDS:-3}"
[ "${NOVELTY_BENCH_NO_BUILD:-0}" = 1 ] || "$here/scripts/build.sh" cpu >/dev/null
novelty="$here/build/cpu/novelty"
bench="$here/build/cpu/bench/retrieval_bench"
if [ ! -f "$work/v2/manifest.json" ]; then
  mkdir -p "$work"
  "$novelty" corpus import -q --overwrite --format paperlists --field ml --in "$data" --out "$work/v2"
fi
if [ ! -f "$work/v1/manifest.json" ]; then
  rm -rf "$work/v1.tmp"
  cp -r "$work/v2" "$work/v1.tmp"
  python3 - "$work/v1.tmp" "$here/tests/fixtures/version_1_layout.sql" <<'PY'
import hashlib, json, sqlite3, sys
d = sys.argv[1]
db = sqlite3.connect(d + "/papers.sqlite", isolation_level=None)
db.executescript(open(sys.argv[2]).read())
db.close()
m = json.load(open(d + "/manifest.json"))
m["format_version"] = 1
h = hashlib.sha256()
with open(d + "/papers.sqlite", "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
m["checksums"]["papers.sqlite"] = h.hexdigest()
m["fingerprints"]["papers.sqlite"] = None  # (only the shape checks on open, as for old corpora)
json.dump(m, open(d + "/manifest.json", "w"), indent=2)
PY
  mv "$work/v1.tmp" "$work/v1"
fi
for round in $(seq "$rounds"); do
  for layout in v2 v1; do
    printf '%s round %s: ' "$layout" "$round"
    "$bench" "$work/$layout" "$@"
  done
done
