#!/usr/bin/env bash
# BM25 (and hybrid) retrieval speed on the keyed papers.sqlite layout (format version 2: records
# under a stable key, rows in a narrow table, the full-text index keyed by `key`) against format
# version 1 (a row-keyed papers table, the full-text index keyed by row) holding the same papers:
# the ML corpus is imported once, a copy is rewritten into version 1's layout by SQL (as
# tests/engine/corpus/corpus_add_sqlite_test.cpp does), and bench/retrieval_bench.cpp runs on each
# in turn, NOVELTY_BENCH_ROUNDS (default 3) times, alternating.
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
  python3 - "$work/v1.tmp" <<'PY'
import hashlib, json, sqlite3, sys
d = sys.argv[1]
db = sqlite3.connect(d + "/papers.sqlite")
db.executescript("""
    CREATE TABLE old_papers (
        row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL, abstract TEXT NOT NULL,
        date TEXT, sort_date TEXT, year INTEGER, field TEXT, venue TEXT, citations INTEGER,
        extra TEXT NOT NULL, input_row INTEGER NOT NULL);
    INSERT INTO old_papers SELECT row, id, title, abstract, date, sort_date, year, field, venue, citations,
                                  extra, input_row FROM papers;
    CREATE TABLE old_aliases (alias TEXT NOT NULL PRIMARY KEY, row INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO old_aliases SELECT alias, row FROM aliases;
    DROP VIEW aliases; DROP VIEW papers; DROP TABLE papers_fts;
    DROP TABLE paper_aliases; DROP TABLE paper_rows; DROP TABLE paper_data;
    ALTER TABLE old_papers RENAME TO papers;
    ALTER TABLE old_aliases RENAME TO aliases;
    CREATE INDEX papers_sort_date ON papers (sort_date);
    CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, content='papers', content_rowid='row');
    INSERT INTO papers_fts (papers_fts) VALUES ('rebuild');
""")
db.commit()
db.execute("VACUUM")
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
