#!/usr/bin/env python3
"""The CPU backend against FAISS, side by side on the same data and thread count.

Runs each engine in its own process (so peak memory is its own) on the same float32 .npy files:
top-k search of n_queries against n_corpus rows for each dimension, and the self-join of the
corpus with Q neighbours (FAISS searches the corpus against itself for Q+1 and drops each row's
own hit). The FAISS peers (--peers): IndexFlatIP (exact, float32) and IndexScalarQuantizer with
fp16 or bf16 codes (half the memory; approximate: its similarities are those of the rounded
vectors). The engine runs with each --storages (f32: sgemm on the rows; bf16: the bf16 copy
screens the products, candidates re-scored in float32), and the bf16 results are checked to be
the f32 results bit for bit. Checks how often each peer returns the engine's neighbours up to
near-ties and prints a markdown table, one row per workload, engine storage and peer, with the
engine's resident memory split into anonymous and file-backed pages. Usage: bench/run_cpu_search_bench.sh (which sets up bench/.venv and builds first).
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


PEERS = {"flat": "FAISS IndexFlatIP", "sq-fp16": "FAISS IndexScalarQuantizer fp16",
         "sq-bf16": "FAISS IndexScalarQuantizer bf16"}


def faiss_index(kind, dim):
    import faiss
    if kind == "flat":
        return faiss.IndexFlatIP(dim)
    qtype = {"sq-fp16": faiss.ScalarQuantizer.QT_fp16, "sq-bf16": faiss.ScalarQuantizer.QT_bf16}[kind]
    return faiss.IndexScalarQuantizer(dim, qtype, faiss.METRIC_INNER_PRODUCT)


def faiss_job(args):
    """Runs inside a child process: one FAISS measurement, results written beside --out."""
    import faiss
    faiss.omp_set_num_threads(args.threads)
    corpus = np.load(args.corpus, mmap_mode="r")
    index = faiss_index(args.faiss_index, corpus.shape[1])
    data = np.ascontiguousarray(corpus)
    index.train(data)  # (nothing to learn for flat, fp16 or bf16 codes)
    index.add(data)
    if args.faiss_index != "flat":
        del data, corpus  # the codes alone stay, as a user of a half-size index keeps them
        corpus = None
    if args.mode == "search":
        queries = np.load(args.queries)
        start = time.perf_counter()
        sims, rows = index.search(queries, args.k)
        seconds = time.perf_counter() - start
        n = queries.shape[0]
    else:
        start = time.perf_counter()
        sims, rows = index.search(np.ascontiguousarray(np.load(args.corpus, mmap_mode="r")), args.q + 1)
        seconds = time.perf_counter() - start
        n = index.ntotal
    rows.astype(np.int64).tofile(args.out + ".rows")
    sims.astype(np.float32).tofile(args.out + ".sims")
    peak = peak_rss_mb()
    print(json.dumps({"seconds": seconds, "per_second": n / seconds, "peak_rss_mb": peak}))


def run_group(cmds, env, repeat):
    """Runs every command `repeat` times, alternating, and keeps each one's median run: on a
    shared machine single runs vary by several percent. cmds: name -> command; same keys out."""
    runs = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            runs[name].append(run_child(cmd, env))
    out = {}
    for name, rs in runs.items():
        out[name] = median_run(rs)
        out[name]["all_seconds"] = [round(r["seconds"], 2) for r in rs]
    return out


def recall(rows_a, rows_b):
    """Share of the engine's top-k rows that the peer also returned (its recall against the exact
    answer): the measure for a peer whose similarities are those of rounded vectors, where agree()
    with its 1e-4 tolerance says little."""
    return float(np.mean([len(set(a) & set(b)) / len(a) for a, b in zip(rows_a, rows_b)]))


def read_result(path, width):
    rows = np.fromfile(path + ".rows", dtype=np.int64).reshape(-1, width)
    sims = np.fromfile(path + ".sims", dtype=np.float32).reshape(-1, width)
    return rows, sims


def drop_own_hits(rows_all, sims_all, q):
    """FAISS's self-join answer (Q+1 per row) without each row's own hit (or the last one when
    the row itself was not found first)."""
    rows = np.empty((rows_all.shape[0], q), dtype=rows_all.dtype)
    sims = np.empty((rows_all.shape[0], q), dtype=sims_all.dtype)
    for i in range(rows_all.shape[0]):
        keep = rows_all[i] != i
        if keep.all():
            keep[-1] = False
        rows[i] = rows_all[i][keep]
        sims[i] = sims_all[i][keep]
    return rows, sims


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
    p.add_argument("--peers", default="flat,sq-fp16,sq-bf16", help="FAISS indexes: flat, sq-fp16, sq-bf16")
    p.add_argument("--storages", default="f32,bf16", help="the engine's CPU storages to run (f32, bf16)")
    p.add_argument("--results", default=None, help="append one JSON line per workload and peer")
    # Internal: one FAISS job in a child process.
    p.add_argument("--faiss-job", choices=["search", "selfjoin"])
    p.add_argument("--mode")
    p.add_argument("--corpus")
    p.add_argument("--queries")
    p.add_argument("--out")
    p.add_argument("--faiss-index", default="flat", choices=list(PEERS))
    args = p.parse_args()
    if args.faiss_job:
        args.mode = args.faiss_job
        faiss_job(args)
        return

    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    peers = [name for name in args.peers.split(",") if name]
    storages = [name for name in args.storages.split(",") if name]
    rows_out = []
    for dim in [int(d) for d in args.dims.split(",")]:
        corpus = os.path.join(args.work, f"corpus_{args.n_corpus}_{dim}.npy")
        queries = os.path.join(args.work, f"queries_{args.n_queries}_{dim}.npy")
        if not os.path.exists(corpus):
            make_data(corpus, args.n_corpus, dim, seed=dim)
        if not os.path.exists(queries):
            make_data(queries, args.n_queries, dim, seed=dim + 1)
        cmds = {f"ours-{s}": [args.engine, "search", "--corpus", corpus, "--queries", queries, "--k", str(args.k),
                              "--threads", str(args.threads), "--storage", s,
                              "--out", os.path.join(args.work, f"ours-{s}")] for s in storages}
        for peer in peers:
            cmds[peer] = [sys.executable, __file__, "--faiss-job", "search", "--faiss-index", peer, "--corpus", corpus,
                          "--queries", queries, "--k", str(args.k), "--threads", str(args.threads),
                          "--out", os.path.join(args.work, peer)]
        runs = run_group(cmds, env, args.repeat)
        name = f"search {args.n_queries:,} x {args.n_corpus:,} x {dim}, k={args.k}"
        compare(args, name, "queries/s", storages, peers, runs, args.k, None, os.path.getsize(corpus) / 2**20, rows_out)
        print(f"search x {dim}: " + ", ".join(f"{n} {r['all_seconds']} s" for n, r in runs.items()), file=sys.stderr)

    dim = args.selfjoin_dim
    corpus = os.path.join(args.work, f"corpus_{args.n_corpus}_{dim}.npy")
    if not os.path.exists(corpus):
        make_data(corpus, args.n_corpus, dim, seed=dim)
    q = args.q
    cmds = {f"ours-{s}": [args.engine, "selfjoin", "--corpus", corpus, "--q", str(q), "--threads", str(args.threads),
                          "--storage", s, "--out", os.path.join(args.work, f"ours-{s}")] for s in storages}
    for peer in peers:
        cmds[peer] = [sys.executable, __file__, "--faiss-job", "selfjoin", "--faiss-index", peer, "--corpus", corpus,
                      "--q", str(q), "--threads", str(args.threads), "--out", os.path.join(args.work, peer)]
    runs = run_group(cmds, env, args.repeat)
    compare(args, f"self-join {args.n_corpus:,} x {dim}, Q={q}", "rows/s", storages, peers, runs, q, q,
            os.path.getsize(corpus) / 2**20, rows_out)
    report(args, rows_out)


def compare(args, name, unit, storages, peers, runs, width, self_join_q, corpus_mb, rows_out):
    """Adds the rows of one workload: every engine storage against every peer, and each storage
    but the first against the first (with `identical`: the same bits, rows and similarities)."""
    results = {s: read_result(os.path.join(args.work, f"ours-{s}"), width) for s in storages}
    for s in storages:
        ours = results[s]
        for peer in peers:
            theirs = read_result(os.path.join(args.work, peer), width + (1 if self_join_q else 0))
            if self_join_q:
                theirs = drop_own_hits(*theirs, self_join_q)
            rows_out.append((name, unit, s, PEERS[peer], runs[f"ours-{s}"], runs[peer],
                             (agree(*ours, *theirs), recall(ours[0], theirs[0])), corpus_mb, None))
        if s != storages[0]:
            base = results[storages[0]]
            identical = bool(np.array_equal(ours[0], base[0]) and np.array_equal(ours[1].view(np.uint32),
                                                                                 base[1].view(np.uint32)))
            if self_join_q:
                density = [np.fromfile(os.path.join(args.work, f"ours-{x}.density"), dtype=np.uint32)
                           for x in (s, storages[0])]
                identical = identical and bool(np.array_equal(*density))
            rows_out.append((name, unit, s, f"the engine, {storages[0]} storage", runs[f"ours-{s}"],
                             runs[f"ours-{storages[0]}"], (1.0 if identical else agree(*ours, *base),
                                                           recall(ours[0], base[0])), corpus_mb, identical))


def report(args, rows_out):
    print(f"\nthreads: {args.threads}; runs per engine: {args.repeat} (median shown, all in brackets); "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print("| workload | ours (storage) | peer | peer's rate | ratio (ours / peer) | top-k agreement | recall of ours | "
          "peak RSS ours / peer | ours at the end: anonymous + file-backed | corpus file |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for name, unit, storage, peer, a, b, (agreement, recall_of_ours), corpus_mb, identical in rows_out:
        same = "" if identical is None else (" (identical bits)" if identical else " (DIFFERENT)")
        print(f"| {name} | {a['per_second']:,.0f} {unit} ({a['seconds']:.2f} s {a['all_seconds']}), {storage} | "
              f"{peer} | {b['per_second']:,.0f} {unit} ({b['seconds']:.2f} s {b['all_seconds']}) | "
              f"{a['per_second'] / b['per_second']:.2f} | {100 * agreement:.2f}%{same} | {100 * recall_of_ours:.2f}% | "
              f"{a['peak_rss_mb']:,.0f} / {b['peak_rss_mb']:,.0f} MB | "
              f"{a.get('rss_anon_mb', -1):,.0f} + {a.get('rss_file_mb', -1):,.0f} MB | {corpus_mb:,.0f} MB |")
        if args.results:
            with open(args.results, "a", encoding="utf-8") as f:
                f.write(json.dumps({"date": date, "bench": "cpu_search_vs_faiss", "workload": name, "peer": peer,
                                    "storage": storage, "identical": identical,
                                    "ours_rss_anon_mb": a.get("rss_anon_mb"), "ours_rss_file_mb": a.get("rss_file_mb"),
                                    "threads": args.threads, "ours_per_s": round(a["per_second"], 1),
                                    "peer_per_s": round(b["per_second"], 1),
                                    "ratio": round(a["per_second"] / b["per_second"], 3),
                                    "ours_seconds": a["all_seconds"], "peer_seconds": b["all_seconds"],
                                    "agreement": round(agreement, 5), "recall": round(recall_of_ours, 5),
                                    "ours_peak_rss_mb": round(a["peak_rss_mb"], 1),
                                    "peer_peak_rss_mb": round(b["peak_rss_mb"], 1)}) + "\n")


if __name__ == "__main__":
    main()
