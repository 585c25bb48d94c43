#!/usr/bin/env python3
"""Exploratory: two corrections of RND's reference distribution, on a built devset, in numpy.

Not an engine feature. RND ranks an idea's density among its P nearest papers' densities; those
papers are not drawn like the idea: a paper's nearest neighbours lie, on average, in denser places
than the paper itself (papers in dense regions are among many papers' nearest), so ordinary papers
score well above 50 (bench/devset/rnd_null.py measures it with the engine). This script computes,
beside RND itself, two scores that try to undo that, and reports them per field and label:

  rnd_hub  the neighbours weighted by 1 / (how many papers of the prefix have them among their P
           nearest): the weighted reference set counts every paper once overall;
  rnd2     the idea's RND as a percentile (ties half) among its P nearest papers' own RNDs.

Exact as `novelty score` for RND itself (cosine, Q-mean, the idea left out of its neighbours'
lists, cutoffs as row prefixes); --check compares its RND with an engine score file and stops on
any difference. The in-degrees and the neighbours' RNDs of rnd_hub and rnd2 ignore the
idea's own exclusion (it stays in the other papers' lists): an approximation for exploration.

  .venv/bin/python bench/devset/rnd_corrections.py --work build/devset-third --p 100 --q 50
      --text-vectors build/devset-third/ml_pos.npy [--check build/devset-third/scores.jsonl]

WORK holds set/ (the builder's ideas.jsonl, labels.jsonl) and corpus/ (imported, embedded).
--text-vectors: the vectors of the ideas given as text, in their order in ideas.jsonl
(`novelty embed --in` on those records). Writes WORK/corrections_pP_qQ.jsonl.
"""
import argparse
import bisect
import json
import sqlite3
import sys

import numpy as np

from rnd_null import ks_statistic


def full_knn(vectors, depth, block=1024):
    """Each row's `depth` nearest other rows by cosine, most similar first (stable by row)."""
    n = len(vectors)
    idx = np.empty((n, depth), np.int32)
    sim = np.empty((n, depth), np.float32)
    for s in range(0, n, block):
        sims = vectors[s:s + block] @ vectors.T
        sims[np.arange(sims.shape[0]), s + np.arange(sims.shape[0])] = -np.inf
        part = np.argpartition(-sims, depth, axis=1)[:, :depth]
        values = np.take_along_axis(sims, part, 1)
        order = np.argsort(-values, axis=1, kind="stable")
        idx[s:s + block] = np.take_along_axis(part, order, 1)
        sim[s:s + block] = np.take_along_axis(values, order, 1)
    return idx, sim


class Prefix:
    """Neighbour lists, densities, in-degrees and RNDs of every row of one cutoff's row prefix."""

    def __init__(self, vectors, knn, knn_sim, rows, p, q):
        need = p + 1  # one more, for the idea left out of a list
        inside = knn[:rows] < rows
        counts = inside.sum(axis=1)
        self.lists = np.empty((rows, need), np.int32)
        self.sims = np.empty((rows, need), np.float32)
        for r in range(rows):
            if counts[r] >= need:
                keep = np.flatnonzero(inside[r])[:need]
                self.lists[r], self.sims[r] = knn[r, keep], knn_sim[r, keep]
            else:  # the precomputed depth ran out within this prefix: search the row directly
                s = vectors[:rows] @ vectors[r]
                s[r] = -np.inf
                order = np.argsort(-s, kind="stable")[:need]
                self.lists[r], self.sims[r] = order, s[order]
        self.in_degree = np.bincount(self.lists[:, :p].ravel(), minlength=rows)
        nd = np.mean(1 - self.sims[:, :q], axis=1)
        self.rnd = 100.0 * np.mean(nd[self.lists[:, :p]] <= nd[:, None], axis=1)


def scores_of(prefix, vectors, vec, self_row, rows, p, q):
    """(rnd, rnd_hub, rnd2) of one idea: a corpus row (self_row) or a vector."""
    if self_row is not None:
        nb, ns = prefix.lists[self_row][:p], prefix.sims[self_row][:p]
    else:
        s = vectors[:rows] @ vec
        nb = np.argsort(-s, kind="stable")[:p]
        ns = s[nb]
    nd_idea = np.mean(1 - ns[:q])
    nd_nb = np.array([np.mean([1 - y for x, y in zip(prefix.lists[j], prefix.sims[j]) if x != self_row][:q])
                      for j in nb])
    below = nd_nb <= nd_idea
    rnd = 100.0 * below.mean()
    weight = 1.0 / np.maximum(prefix.in_degree[nb], 1)
    rnd_hub = 100.0 * (weight * below).sum() / weight.sum()
    theirs = prefix.rnd[nb]
    rnd2 = 100.0 * (np.sum(theirs < rnd) + 0.5 * np.sum(theirs == rnd)) / p
    return rnd, rnd_hub, rnd2


def auroc(pos, neg):
    """P(a novel idea scores above an established one), ties counted half."""
    neg = sorted(neg)
    return sum(bisect.bisect_left(neg, x) + 0.5 * (bisect.bisect_right(neg, x) - bisect.bisect_left(neg, x))
               for x in pos) / (len(pos) * len(neg))


def summarise(out, labels_path):
    """Per score: AUROC per field and mixed; KS between the fields overall, novel only, established only."""
    with open(labels_path) as f:
        labels = {r["id"]: (r["label"], r["field"]) for r in map(json.loads, f)}
    fields = sorted({field for _, field in labels.values()})
    for k, name in enumerate(("rnd", "rnd_hub", "rnd2")):
        by = {}
        for paper_id, values in out.items():
            by.setdefault(labels[paper_id], []).append(values[k])
        cells = ["AUROC %s %.3f" % (f, auroc(by[(1, f)], by[(0, f)])) for f in fields]
        cells.append("mixed %.3f" % auroc(sum((by[(1, f)] for f in fields), []), sum((by[(0, f)] for f in fields), [])))
        a, b = fields[0], fields[-1]
        cells.append("KS %.3f nov %.3f est %.3f" % (ks_statistic(by[(1, a)] + by[(0, a)], by[(1, b)] + by[(0, b)]),
                                                    ks_statistic(by[(1, a)], by[(1, b)]),
                                                    ks_statistic(by[(0, a)], by[(0, b)])))
        print("%-8s %s" % (name, "  ".join(cells)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--q", type=int, default=50)
    ap.add_argument("--depth", type=int, default=700, help="neighbours precomputed per paper")
    ap.add_argument("--text-vectors", required=True)
    ap.add_argument("--check", help="engine score file (novelty score --out) whose rnd must match")
    args = ap.parse_args()
    vectors = np.load(args.work + "/corpus/vectors.npy").astype(np.float32)
    db = sqlite3.connect("file:%s/corpus/papers.sqlite?mode=ro" % args.work, uri=True)
    papers = db.execute("SELECT row, id, sort_date FROM papers ORDER BY row").fetchall()
    row_of = {paper_id: row for row, paper_id, _ in papers}
    dates = [d for _, _, d in papers]
    if dates != sorted(dates):
        sys.exit("rnd_corrections: rows are not in date order")
    knn, knn_sim = full_knn(vectors, args.depth)
    text = np.load(args.text_vectors)
    ideas, t = [], 0
    with open(args.work + "/set/ideas.jsonl") as f:
        for rec in map(json.loads, f):
            cutoff = rec.get("date")
            if cutoff:  # a year or year-month cutoff takes in its whole period
                cutoff = cutoff + {4: "-12-31", 7: "-31"}.get(len(cutoff), "")
            rows = bisect.bisect_right(dates, cutoff) if cutoff else len(dates)
            if "text" in rec:
                ideas.append((rec["id"], text[t], None, rows))
                t += 1
            else:
                ideas.append((rec["id"], None, row_of[rec["id"]], rows))
    out, prefix, prefix_rows = {}, None, None
    for paper_id, vec, self_row, rows in sorted(ideas, key=lambda x: x[3]):
        if rows != prefix_rows:
            prefix, prefix_rows = Prefix(vectors, knn, knn_sim, rows, args.p, args.q), rows
        out[paper_id] = scores_of(prefix, vectors, vec, self_row, rows, args.p, args.q)
    if args.check:
        with open(args.check) as f:
            engine = {r["id"]: r["scores"]["rnd"] for r in map(json.loads, f)}
        worst = max(abs(engine[i] - out[i][0]) for i in out)
        if worst > 1e-9:
            sys.exit("rnd_corrections: RND differs from the engine's by up to %g" % worst)
        print("RND equals the engine's on all %d ideas" % len(out))
    path = "%s/corrections_p%d_q%d.jsonl" % (args.work, args.p, args.q)
    with open(path, "w") as f:
        for paper_id, (rnd, hub, second) in out.items():
            f.write(json.dumps({"id": paper_id, "scores": {"rnd": rnd, "rnd_hub": hub, "rnd2": second}}) + "\n")
    print("wrote", path)
    summarise(out, args.work + "/set/labels.jsonl")


if __name__ == "__main__":
    main()
