#!/usr/bin/env python3
"""The CPU backend against FAISS IndexFlatIP, side by side on the same data and thread count.

Runs each engine in its own process (so peak memory is its own) on the same float32 .npy files:
top-k search of n_queries against n_corpus rows for each dimension, and the self-join of the
corpus with Q neighbours (FAISS searches the corpus against itself for Q+1 and drops each row's
own hit). Checks that both return the same neighbours up to near-ties and prints a markdown
table. Usage: bench/run_cpu_search_bench.sh (which sets up bench/.venv and builds first).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from bench_common import median_run, peak_rss_mb, run_child


def make_data(path, n, dim, seed, n_centers=2000):
    """Clustered unit vectors (a mixture around random centres), like real embeddings."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((n_centers, dim), dtype=np.float32)
    x = centers[rng.integers(0, n_centers, n)] + 0.7 * rng.standard_normal((n, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    np.save(path, x.astype(np.float32))


def faiss_job(args):
    """Runs inside a child process: one FAISS measurement, results written beside --out."""
    import faiss
    faiss.omp_set_num_threads(args.threads)
    corpus = np.load(args.corpus, mmap_mode="r")
    index = faiss.IndexFlatIP(corpus.shape[1])
    index.add(np.ascontiguousarray(corpus))
    if args.mode == "search":
        queries = np.load(args.queries)
        start = time.perf_counter()
        sims, rows = index.search(queries, args.k)
        seconds = time.perf_counter() - start
        n = queries.shape[0]
    else:
        start = time.perf_counter()
        sims, rows = index.search(np.ascontiguousarray(corpus), args.q + 1)
        seconds = time.perf_counter() - start
        n = corpus.shape[0]
    rows.astype(np.int64).tofile(args.out + ".rows")
    sims.astype(np.float32).tofile(args.out + ".sims")
    peak = peak_rss_mb()
    print(json.dumps({"seconds": seconds, "per_second": n / seconds, "peak_rss_mb": peak}))


def run_pair(ours_cmd, faiss_cmd, env, repeat):
    """Runs both engines `repeat` times, alternating, and keeps each one's median run: on a shared
    machine single runs vary by several percent."""
    ours, theirs = [], []
    for _ in range(repeat):
        ours.append(run_child(ours_cmd, env))
        theirs.append(run_child(faiss_cmd, env))
    a, b = median_run(ours), median_run(theirs)
    a["all_seconds"] = [round(r["seconds"], 2) for r in ours]
    b["all_seconds"] = [round(r["seconds"], 2) for r in theirs]
    return a, b


def agree(rows_a, sims_a, rows_b, sims_b, tol=1e-4):
    """Share of queries whose top-k agree: same similarities rank by rank within tol, and the
    same row sets except for rows whose similarity is within tol of the k-th (near-ties)."""
    ok = 0
    for i in range(rows_a.shape[0]):
        if np.max(np.abs(sims_a[i] - sims_b[i])) > tol:
            continue
        kth = min(sims_a[i, -1], sims_b[i, -1])
        sa = {r for r, s in zip(rows_a[i], sims_a[i]) if s > kth + tol}
        sb = {r for r, s in zip(rows_b[i], sims_b[i]) if s > kth + tol}
        ok += sa == sb
    return ok / rows_a.shape[0]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--engine", required=False, help="path of the search_bench binary")
    p.add_argument("--work", default="/tmp/novelty-bench")
    p.add_argument("--n-corpus", type=int, default=100_000)
    p.add_argument("--n-queries", type=int, default=10_000)
    p.add_argument("--dims", default="384,1024")
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--q", type=int, default=50)
    p.add_argument("--selfjoin-dim", type=int, default=384)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeat", type=int, default=3, help="runs per engine and workload (median kept)")
    # Internal: one FAISS job in a child process.
    p.add_argument("--faiss-job", choices=["search", "selfjoin"])
    p.add_argument("--mode")
    p.add_argument("--corpus")
    p.add_argument("--queries")
    p.add_argument("--out")
    args = p.parse_args()
    if args.faiss_job:
        args.mode = args.faiss_job
        faiss_job(args)
        return

    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    rows_out = []
    for dim in [int(d) for d in args.dims.split(",")]:
        corpus = os.path.join(args.work, f"corpus_{args.n_corpus}_{dim}.npy")
        queries = os.path.join(args.work, f"queries_{args.n_queries}_{dim}.npy")
        if not os.path.exists(corpus):
            make_data(corpus, args.n_corpus, dim, seed=dim)
        if not os.path.exists(queries):
            make_data(queries, args.n_queries, dim, seed=dim + 1)
        ours, theirs = run_pair(
            [args.engine, "search", "--corpus", corpus, "--queries", queries, "--k", str(args.k),
             "--threads", str(args.threads), "--out", os.path.join(args.work, "ours")],
            [sys.executable, __file__, "--faiss-job", "search", "--corpus", corpus, "--queries", queries,
             "--k", str(args.k), "--threads", str(args.threads), "--out", os.path.join(args.work, "faiss")],
            env, args.repeat)
        k = args.k
        a_rows = np.fromfile(os.path.join(args.work, "ours.rows"), dtype=np.int64).reshape(-1, k)
        a_sims = np.fromfile(os.path.join(args.work, "ours.sims"), dtype=np.float32).reshape(-1, k)
        b_rows = np.fromfile(os.path.join(args.work, "faiss.rows"), dtype=np.int64).reshape(-1, k)
        b_sims = np.fromfile(os.path.join(args.work, "faiss.sims"), dtype=np.float32).reshape(-1, k)
        corpus_mb = os.path.getsize(corpus) / 2**20
        rows_out.append((f"search {args.n_queries:,} x {args.n_corpus:,} x {dim}, k={k}", "queries/s", ours, theirs,
                         agree(a_rows, a_sims, b_rows, b_sims), corpus_mb))
        print(f"{rows_out[-1][0]}: ours {ours['all_seconds']} s, FAISS {theirs['all_seconds']} s", file=sys.stderr)

    dim = args.selfjoin_dim
    corpus = os.path.join(args.work, f"corpus_{args.n_corpus}_{dim}.npy")
    if not os.path.exists(corpus):
        make_data(corpus, args.n_corpus, dim, seed=dim)
    ours, theirs = run_pair(
        [args.engine, "selfjoin", "--corpus", corpus, "--q", str(args.q), "--threads", str(args.threads),
         "--out", os.path.join(args.work, "ours")],
        [sys.executable, __file__, "--faiss-job", "selfjoin", "--corpus", corpus, "--q", str(args.q),
         "--threads", str(args.threads), "--out", os.path.join(args.work, "faiss")],
        env, args.repeat)
    q = args.q
    a_rows = np.fromfile(os.path.join(args.work, "ours.rows"), dtype=np.int64).reshape(-1, q)
    a_sims = np.fromfile(os.path.join(args.work, "ours.sims"), dtype=np.float32).reshape(-1, q)
    b_rows_all = np.fromfile(os.path.join(args.work, "faiss.rows"), dtype=np.int64).reshape(-1, q + 1)
    b_sims_all = np.fromfile(os.path.join(args.work, "faiss.sims"), dtype=np.float32).reshape(-1, q + 1)
    # Drop each row's own hit (or the last one when the row itself was not found first).
    b_rows = np.empty_like(a_rows)
    b_sims = np.empty_like(a_sims)
    for i in range(b_rows_all.shape[0]):
        keep = b_rows_all[i] != i
        if keep.all():
            keep[-1] = False
        b_rows[i] = b_rows_all[i][keep]
        b_sims[i] = b_sims_all[i][keep]
    rows_out.append((f"self-join {args.n_corpus:,} x {dim}, Q={q}", "rows/s", ours, theirs,
                     agree(a_rows, a_sims, b_rows, b_sims), os.path.getsize(corpus) / 2**20))

    print(f"\nthreads: {args.threads}; runs per engine: {args.repeat} (median shown, all in brackets); "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print("| workload | ours | FAISS IndexFlatIP | ratio (ours / FAISS) | top-k agreement | peak RSS ours / FAISS | corpus file |")
    print("|---|---|---|---|---|---|---|")
    for name, unit, a, b, agreement, corpus_mb in rows_out:
        print(f"| {name} | {a['per_second']:,.0f} {unit} ({a['seconds']:.2f} s {a['all_seconds']}) | "
              f"{b['per_second']:,.0f} {unit} ({b['seconds']:.2f} s {b['all_seconds']}) | "
              f"{a['per_second'] / b['per_second']:.2f} | {100 * agreement:.2f}% | "
              f"{a['peak_rss_mb']:,.0f} / {b['peak_rss_mb']:,.0f} MB | {corpus_mb:,.0f} MB |")


if __name__ == "__main__":
    main()
