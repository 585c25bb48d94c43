#!/usr/bin/env python3
"""The main job as a user would first write it with FAISS and numpy: RND of every idea.

For each distinct cutoff (a row prefix of the date-sorted corpus; one prefix, the whole corpus,
without cutoffs) it builds an IndexFlatIP on the prefix, self-joins the prefix for each paper's
Q nearest other papers (searching Q + 1 and dropping the paper's own hit), searches that
cutoff's ideas for their max(P, Q) nearest, and ranks each idea's density among its P nearest
papers' densities, as RND defines it (docs/scoring.md): RND = 100 x (share of the P neighbours
whose density is at most the idea's). Densities are means of 1 - similarity in float64.

Usage: mainjob_faiss_peer.py CORPUS.npy IDEAS.npy LIMITS.npy OUT.npy [--threads 2] [--p 100] [--q 50]
LIMITS.npy: per idea, its prefix (rows [0, limit) are searchable). OUT.npy: per idea, its RND.
Prints one JSON line of phase times to stdout.
"""
import argparse
import json
import time

import faiss
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("ideas")
    ap.add_argument("limits")
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--q", type=int, default=50)
    a = ap.parse_args()
    faiss.omp_set_num_threads(a.threads)
    t0 = time.perf_counter()
    corpus = np.ascontiguousarray(np.load(a.corpus), dtype=np.float32)
    ideas = np.ascontiguousarray(np.load(a.ideas), dtype=np.float32)
    ideas /= np.linalg.norm(ideas, axis=1, keepdims=True)
    limits = np.load(a.limits)
    rnd = np.full(len(ideas), np.nan)
    times = {"load": time.perf_counter() - t0, "self_join": 0.0, "search": 0.0}
    k = max(a.p, a.q)
    for limit in np.unique(limits):
        prefix = corpus[:limit]
        index = faiss.IndexFlatIP(corpus.shape[1])
        index.add(prefix)
        t = time.perf_counter()
        sims, _ = index.search(prefix, a.q + 1)
        density = (1.0 - sims[:, 1:].astype(np.float64)).mean(axis=1)
        times["self_join"] += time.perf_counter() - t
        which = np.nonzero(limits == limit)[0]
        t = time.perf_counter()
        idea_sims, idea_rows = index.search(ideas[which], k)
        times["search"] += time.perf_counter() - t
        own = (1.0 - idea_sims[:, : a.q].astype(np.float64)).mean(axis=1)
        theirs = density[idea_rows[:, : a.p]]
        rnd[which] = 100.0 * (theirs <= own[:, None]).sum(axis=1) / a.p
    np.save(a.out, rnd)
    times["total"] = time.perf_counter() - t0
    print(json.dumps({k: round(v, 3) for k, v in times.items()}))


if __name__ == "__main__":
    main()
