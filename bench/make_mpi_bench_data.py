"""Data for bench/run_mpi_bench.sh: a corpus of random unit rows in date order and random unit
queries, float32, as .npy files, plus the corpus's JSON Lines records (ids and dates only)."""
import argparse
import json

import numpy as np


def unit_rows(rng, n, dim):
    rows = rng.standard_normal((n, dim), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-corpus", type=int, default=200_000)
    parser.add_argument("--n-queries", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(17)
    np.save(f"{args.out}/corpus.npy", unit_rows(rng, args.n_corpus, args.dim))
    np.save(f"{args.out}/queries.npy", unit_rows(rng, args.n_queries, args.dim))
    with open(f"{args.out}/papers.jsonl", "w") as f:
        for i in range(args.n_corpus):
            year = 2000 + i * 25 // args.n_corpus
            f.write(json.dumps({"id": f"p{i}", "title": f"paper {i}", "date": f"{year}-01-01"}) + "\n")


if __name__ == "__main__":
    main()
