#!/usr/bin/env python3
"""Inputs for bench/run_density_bench.sh: a corpus of clustered random unit vectors with dates
spread over 30 years, and ideas drawn from the same mixture.

Usage: bench/make_density_bench_data.py OUT_DIR N_PAPERS [--dim 384] [--ideas 1000] [--centers 2000]
       [--first-year 1995] [--years 30] [--seed 1]
Writes OUT_DIR/papers.jsonl ({"id", "title", "date"}: a uniform day in the years), ids.txt,
vectors.npy (N x D float32, row i = line i: centres plus 0.7 Gaussian noise, normalised, the
mixture of bench/cpu_search_vs_faiss.py) and ideas.npy (the same mixture, another seed).
"""
import argparse
import datetime
import os

import numpy as np


def mixture(rng, centers, n, dim):
    x = centers[rng.integers(0, len(centers), n)] + 0.7 * rng.standard_normal((n, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--ideas", type=int, default=1000)
    ap.add_argument("--centers", type=int, default=2000)
    ap.add_argument("--first-year", type=int, default=1995)
    ap.add_argument("--years", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    centers = rng.standard_normal((a.centers, a.dim), dtype=np.float32)
    first = datetime.date(a.first_year, 1, 1)
    span = (datetime.date(a.first_year + a.years, 1, 1) - first).days
    days = rng.integers(0, span, a.n)
    with open(os.path.join(a.out, "papers.jsonl"), "w") as papers, open(os.path.join(a.out, "ids.txt"), "w") as ids:
        for i in range(a.n):
            date = first + datetime.timedelta(days=int(days[i]))
            papers.write('{"id": "b%d", "title": "paper %d", "date": "%s"}\n' % (i, i, date.isoformat()))
            ids.write("b%d\n" % i)
    vectors = np.lib.format.open_memmap(os.path.join(a.out, "vectors.npy"), mode="w+", dtype=np.float32,
                                        shape=(a.n, a.dim))
    for start in range(0, a.n, 100000):
        stop = min(a.n, start + 100000)
        vectors[start:stop] = mixture(rng, centers, stop - start, a.dim)
    vectors.flush()
    np.save(os.path.join(a.out, "ideas.npy"), mixture(np.random.default_rng(a.seed + 1), centers, a.ideas, a.dim))


if __name__ == "__main__":
    main()
