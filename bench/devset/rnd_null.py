#!/usr/bin/env python3
"""RND's null distribution per field: how `novelty score` rates ordinary papers of the corpus.

The RND paper (appendix A.3) reasons that an idea's relative density is a quantile of its
neighbours' densities, so that over ideas drawn like the corpus's papers the score is uniform on
[0, 100] whatever the field, and comparable across fields. This script checks that premise on a
corpus: it draws --per-field papers of each field at random (seeded, sorted by id first; papers
named in --exclude-labels are not drawn), scores each one by id with `novelty score` (itself left
out, against the whole corpus, no cutoff), and prints for each method the quartiles and mean per
field and the two-sample KS statistic between the fields (docs/scoring.md, "Is RND on the same
scale in every field?").

  python3 bench/devset/rnd_null.py --corpus DIR [--novelty build/cpu/novelty] [--per-field 300]
      [--seed 7] [--pq 100:50,500:5,1500:10] [--methods rnd,rel_hd,hd] [--exclude-labels FILE ...]
      [--work DIR] [--json OUT]

Standard library only; the scores come from the engine. Needs at least P + 1 papers in the corpus.
"""
import argparse
import bisect
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile


def ks_statistic(a, b):
    """Two-sample Kolmogorov-Smirnov statistic sup_x |F_a(x) - F_b(x)|."""
    a, b = sorted(a), sorted(b)
    return max(abs(bisect.bisect_right(a, x) / len(a) - bisect.bisect_right(b, x) / len(b)) for x in set(a) | set(b))


def quantile(sorted_values, q):
    """The value at rank floor(q * (n - 1)) of sorted values (no interpolation)."""
    return sorted_values[int(q * (len(sorted_values) - 1))]


def draw_papers(corpus, per_field, seed, excluded):
    """{field: [ids]}: per_field ids of each field drawn with the seed, none of them excluded."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(corpus, "papers.sqlite"), uri=True)
    by_field = {}
    for paper_id, field in db.execute("SELECT id, field FROM papers ORDER BY id"):
        if paper_id not in excluded:
            by_field.setdefault(field or "", []).append(paper_id)
    db.close()
    rng = random.Random(seed)
    drawn = {}
    for field in sorted(by_field):
        ids = by_field[field]
        if len(ids) < per_field:
            sys.exit("rnd_null: field %r has %d papers that may be drawn, fewer than --per-field %d"
                     % (field, len(ids), per_field))
        drawn[field] = rng.sample(ids, per_field)
    return drawn


def score(novelty, corpus, ideas_path, p, q, methods, out_path):
    """Runs `novelty score` by id; returns {id: {method: value}}."""
    done = subprocess.run([novelty, "score", "--corpus", corpus, "--ideas", ideas_path, "--p", str(p), "--q", str(q),
                           "--methods", methods, "--out", out_path, "-q"])
    if done.returncode != 0:
        sys.exit("rnd_null: novelty score failed with exit code %d at P %d, Q %d (its message is above)"
                 % (done.returncode, p, q))
    with open(out_path) as f:
        return {r["id"]: r["scores"] for r in map(json.loads, f)}


def summarise(drawn, scores, methods):
    """Per method: quartiles and mean per field, and the largest KS between two fields."""
    rows = []
    fields = sorted(drawn)
    for method in methods:
        per_field = {}
        for field in fields:
            values = sorted(scores[i][method] for i in drawn[field] if scores[i].get(method) is not None)
            per_field[field] = values
        ks = max((ks_statistic(per_field[a], per_field[b]) for a in fields for b in fields if a < b), default=None)
        rows.append({"method": method, "ks_between_fields": ks,
                     "fields": {f: {"n": len(v), "q25": quantile(v, 0.25), "median": quantile(v, 0.5),
                                    "q75": quantile(v, 0.75), "mean": sum(v) / len(v)}
                                for f, v in per_field.items() if v}})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--novelty", default="build/cpu/novelty")
    ap.add_argument("--per-field", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--pq", default="100:50,500:5,1500:10", help="P:Q pairs, comma-separated")
    ap.add_argument("--methods", default="rnd,rel_hd,hd")
    ap.add_argument("--exclude-labels", nargs="*", default=[], help="labels.jsonl files whose ids are not drawn")
    ap.add_argument("--work", help="folder for the ideas and score files (default: a temporary one)")
    ap.add_argument("--json", help="also write the summary as JSON to this file")
    args = ap.parse_args()
    try:
        pairs = [tuple(int(x) for x in item.split(":")) for item in args.pq.split(",")]
        if any(len(pq) != 2 for pq in pairs):
            raise ValueError
    except ValueError:
        sys.exit("rnd_null: --pq takes P:Q pairs such as 100:50,500:5, not %r" % args.pq)
    excluded = set()
    for path in args.exclude_labels:
        with open(path) as f:
            excluded.update(json.loads(line)["id"] for line in f if line.strip())
    drawn = draw_papers(args.corpus, args.per_field, args.seed, excluded)
    work = args.work or tempfile.mkdtemp(prefix="rnd_null.")
    os.makedirs(work, exist_ok=True)
    ideas_path = os.path.join(work, "null_ideas.jsonl")
    with open(ideas_path, "w") as f:
        for field in sorted(drawn):
            for paper_id in drawn[field]:
                f.write(json.dumps({"id": paper_id}) + "\n")
    methods = args.methods.split(",")
    report = []
    for p, q in pairs:
        scores = score(args.novelty, args.corpus, ideas_path, p, q, args.methods,
                       os.path.join(work, "null_p%d_q%d.jsonl" % (p, q)))
        for row in summarise(drawn, scores, methods):
            row.update({"p": p, "q": q})
            report.append(row)
            cells = "  ".join("%s %.3g/%.3g/%.3g mean %.3g" % (f, s["q25"], s["median"], s["q75"], s["mean"])
                              for f, s in sorted(row["fields"].items()))
            print("P %4d Q %3d  %-7s  KS %.3f  quartiles %s" % (p, q, row["method"], row["ks_between_fields"], cells))
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"corpus": args.corpus, "per_field": args.per_field, "seed": args.seed,
                       "rows": report}, f, indent=1)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
