#!/usr/bin/env python3
"""`novelty search` as a user runs it (the whole process, from the query file to the written
output) against its search alone (bench/search_bench, in-process, the same index code) and FAISS
IndexFlatIP, on the same data and thread count.

Builds a corpus of n_corpus papers (generated records, clustered unit vectors attached by id),
then times, alternating `repeat` times and keeping each one's median run:
  - search alone: build/cpu/bench/search_bench on the corpus's vectors.npy;
  - the CLI to JSON Lines: novelty search --queries q.npy --k K --out hits.jsonl, with each
    --storages (f32, bf16; the bf16 .npz is checked to equal the f32 one);
  - the CLI to arrays: the same with --out hits.npz;
  - FAISS IndexFlatIP (bench/cpu_search_vs_faiss.py's child): its whole script and its search.
Prints a markdown table: seconds, and each whole-process run as a ratio to the search alone.
Usage: bench/run_search_output_bench.sh (sets up bench/.venv and builds first).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from bench_common import median_run
from cpu_search_vs_faiss import make_data


def make_corpus(novelty, work, n, dim, seed):
    records = os.path.join(work, "papers.jsonl")
    with open(records, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"paper-{i:07d}", "title": f"Generated paper number {i} about topic {i % 997}",
                                "abstract": "", "year": 1990 + i % 35}) + "\n")
    corpus = os.path.join(work, "corpus")
    subprocess.run([novelty, "corpus", "import", "-q", "--in", records, "--out", corpus, "--overwrite"], check=True)
    vectors = os.path.join(work, "vectors.npy")
    make_data(vectors, n, dim, seed)
    ids = os.path.join(work, "ids.txt")
    with open(ids, "w") as f:
        f.writelines(f"paper-{i:07d}\n" for i in range(n))
    subprocess.run([novelty, "corpus", "add-vectors", "-q", corpus, "--vectors", vectors, "--ids", ids], check=True)
    return corpus


def timed_cli(cmd, env):
    """Wall seconds of the whole process, and its CPU seconds (user + system): on a shared
    machine the CPU time is the steadier of the two."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result = {"seconds": wall, "cpu": cpu}
    lines = out.stdout.strip().splitlines()
    if lines and lines[-1].startswith("{"):
        result["inner"] = json.loads(lines[-1])
    return result


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--novelty", default=os.path.join(here, "..", "build", "cpu", "novelty"))
    parser.add_argument("--engine", default=os.path.join(here, "..", "build", "cpu", "bench", "search_bench"))
    parser.add_argument("--n-corpus", type=int, default=100_000)
    parser.add_argument("--n-queries", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-faiss", action="store_true")
    parser.add_argument("--storages", default="f32,bf16", help="the CPU index's storages to run (--storage)")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory(prefix="novelty-output-bench-") as work:
        corpus = make_corpus(args.novelty, work, args.n_corpus, args.dim, 1)
        queries = os.path.join(work, "queries.npy")
        make_data(queries, args.n_queries, args.dim, 2)
        vectors = os.path.join(corpus, "vectors.npy")
        storages = [s for s in args.storages.split(",") if s]
        alone_cmd = [args.engine, "search", "--corpus", vectors, "--queries", queries, "--k", str(args.k),
                     "--threads", str(args.threads)]
        cli = [args.novelty, "search", "-q", "--corpus", corpus, "--queries", queries, "--k", str(args.k),
               "--threads", str(args.threads), "--device", "cpu"]
        cmds = {"alone": alone_cmd}
        for s in storages:
            cmds[f"jsonl-{s}"] = cli + ["--storage", s, "--out", os.path.join(work, f"hits-{s}.jsonl")]
            cmds[f"npz-{s}"] = cli + ["--storage", s, "--out", os.path.join(work, f"hits-{s}.npz")]
        if not args.no_faiss:  # FAISS's whole script: imports, loading, adding, searching, writing
            cmds["faiss"] = [sys.executable, os.path.join(here, "cpu_search_vs_faiss.py"), "--faiss-job", "search",
                             "--corpus", vectors, "--queries", queries, "--k", str(args.k), "--threads",
                             str(args.threads), "--out", os.path.join(work, "faiss")]
        runs = {name: [] for name in cmds}
        for _ in range(args.repeat):
            for name, cmd in cmds.items():
                runs[name].append(timed_cli(cmd, env))
        jsonl_mb = os.path.getsize(os.path.join(work, f"hits-{storages[0]}.jsonl")) / 1e6
        npz_mb = os.path.getsize(os.path.join(work, f"hits-{storages[0]}.npz")) / 1e6
        loaded = {s: np.load(os.path.join(work, f"hits-{s}.npz")) for s in storages}
        for s in storages:
            assert loaded[s]["sims"].shape == (args.n_queries, args.k), loaded[s]["sims"].shape
            same = all(np.array_equal(loaded[s][key], loaded[storages[0]][key]) for key in loaded[s].files)
            print(f"--storage {s}: the .npz equals --storage {storages[0]}'s: {same}", file=sys.stderr)
    # The search alone: search_bench's own timing of the search call (wall), and its whole
    # process's CPU time (loading two .npy files besides the search).
    alone = sorted(r["inner"]["seconds"] for r in runs["alone"])[len(runs["alone"]) // 2]
    alone_cpu = sorted(r["cpu"] for r in runs["alone"])[len(runs["alone"]) // 2]
    for r in runs["alone"]:
        r["seconds"] = r["inner"]["seconds"]
    shape = f"{args.n_queries:,} x {args.n_corpus:,} x {args.dim}, k={args.k}, {args.threads} threads"
    print(f"| run ({shape}) | wall s (median of {args.repeat}) | all runs | / search alone | CPU s | CPU / search alone |")
    print("|---|---|---|---|---|---|")
    rows = [("search alone (search_bench, in-process, f32)", "alone")]
    for s in storages:
        rows += [(f"novelty search --storage {s} --out .jsonl ({jsonl_mb:.0f} MB)", f"jsonl-{s}"),
                 (f"novelty search --storage {s} --out .npz ({npz_mb:.0f} MB)", f"npz-{s}")]
    if not args.no_faiss:
        rows.append(("FAISS IndexFlatIP, whole script (python, load, add, search, write)", "faiss"))
        runs["faiss-search"] = [dict(r, seconds=r["inner"]["seconds"]) for r in runs["faiss"]]
        rows.append(("FAISS IndexFlatIP, its search call alone", "faiss-search"))
    for label, key in rows:
        seconds = [r["seconds"] for r in runs[key]]
        median = median_run(runs[key])["seconds"]
        cpu = [r["cpu"] for r in runs[key] if "cpu" in r]
        cpu_text = f"{sorted(cpu)[len(cpu) // 2]:.2f} | {sorted(cpu)[len(cpu) // 2] / alone_cpu:.2f}" if cpu else "- | -"
        print(f"| {label} | {median:.2f} | {', '.join(f'{s:.2f}' for s in seconds)} | {median / alone:.2f} | {cpu_text} |")


if __name__ == "__main__":
    main()
