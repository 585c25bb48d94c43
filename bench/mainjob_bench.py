#!/usr/bin/env python3
"""The main job, whole process, side by side: `novelty score` (its default, and each forced
density path) against the FAISS + numpy script a user would write (mainjob_faiss_peer.py).

Workloads: N ideas (corpus vectors plus noise) against the ML corpus's vectors, with no cutoff or
with C distinct per-idea cutoffs (dates spread over the newer 70% of the corpus). Each engine run
starts from the corpus without its density store; the peer does one self-join per distinct cutoff.
Checks that the engine's RND equals the script's, idea by idea, and that both searched the same
prefix. Appends one JSON line per run to --results and prints a markdown table.
Usage: run through bench/run_mainjob_bench.sh (which builds the corpus and the engine first).
"""
import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_name():
    flags, model = set(), platform.processor()
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    wanted = ["avx2", "avx_vnni", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"]
    return model, [f for f in wanted if f in flags]


def corpus_dates(corpus):
    db = sqlite3.connect(f"file:{corpus}/papers.sqlite?mode=ro", uri=True)
    return [d for (d,) in db.execute("SELECT sort_date FROM papers ORDER BY row")]


def make_ideas(work, vectors, dates, n, n_cutoffs, seed):
    """Ideas near random corpus papers; with cutoffs, each idea dated at one of n_cutoffs dates."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(vectors), n)
    noise = rng.standard_normal((n, vectors.shape[1]), dtype=np.float32) * (0.6 / np.sqrt(vectors.shape[1]))
    ideas = vectors[rows] + noise
    ideas /= np.linalg.norm(ideas, axis=1, keepdims=True)
    limits = np.full(n, len(vectors), dtype=np.int64)
    cutoff_of = [None] * n
    if n_cutoffs:
        distinct = sorted(set(dates[int(len(dates) * 0.3):]))
        picks = [distinct[int(i * (len(distinct) - 1) / max(1, n_cutoffs - 1))] for i in range(n_cutoffs)]
        picks = sorted(set(picks))
        which = rng.integers(0, len(picks), n)
        sorted_dates = np.array(dates)
        for i in range(n):
            cutoff_of[i] = picks[which[i]]
            limits[i] = int(np.searchsorted(sorted_dates, cutoff_of[i], side="right"))
    np.save(f"{work}/ideas.npy", ideas.astype(np.float32))
    np.save(f"{work}/limits.npy", limits)
    with open(f"{work}/ideas.jsonl", "w") as f:
        for i in range(n):
            record = {"id": f"i{i}"}
            if cutoff_of[i]:
                record["date"] = cutoff_of[i]
            f.write(json.dumps(record) + "\n")
    return limits, len(set(cutoff_of)) if n_cutoffs else 1


def timed(cmd, log):
    """Runs cmd under /usr/bin/time -v: wall and CPU seconds, peak MiB."""
    with open(log, "w") as err:
        subprocess.run(["/usr/bin/time", "-v"] + cmd, check=True, stdout=subprocess.DEVNULL, stderr=err)
    report = open(log).read()
    def field(name):
        return next(line.split(": ", 1)[1] for line in report.splitlines() if name in line)
    wall = 0.0
    for part in field("Elapsed (wall clock)").split(":"):
        wall = wall * 60 + float(part)
    return {"wall_s": round(wall, 2),
            "cpu_s": round(float(field("User time (seconds)")) + float(field("System time (seconds)")), 2),
            "peak_mb": int(field("Maximum resident set size")) // 1024}


def engine_run(args, work, densities):
    shutil.rmtree(f"{args.corpus}/cache", ignore_errors=True)  # a fresh density store each run
    out = f"{work}/engine-{densities}.jsonl"
    cmd = [args.novelty, "score", "--corpus", args.corpus, "--ideas", f"{work}/ideas.jsonl", "--vectors",
           f"{work}/ideas.npy", "--threads", str(args.threads), "-q", "--out", out]
    if densities != "default":
        cmd += ["--densities", densities]
    stats = timed(cmd, f"{work}/engine-{densities}.time")
    records = [json.loads(line) for line in open(out)]
    by_id = {r["id"]: r for r in records}
    rnd = np.array([by_id[f"i{i}"]["scores"]["rnd"] for i in range(len(records))])
    searchable = np.array([by_id[f"i{i}"]["provenance"]["searchable"] for i in range(len(records))])
    paths = sorted({r["provenance"].get("densities_path", "") for r in records})
    return stats, rnd, searchable, paths


def peer_run(args, work):
    cmd = [args.python, f"{HERE}/mainjob_faiss_peer.py", args.corpus_npy, f"{work}/ideas.npy", f"{work}/limits.npy",
           f"{work}/peer.npy", "--threads", str(args.threads)]
    stats = timed(cmd, f"{work}/peer.time")
    return stats, np.load(f"{work}/peer.npy")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--novelty", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--ideas", default="20000,50000")
    ap.add_argument("--cutoffs", default="0,20")
    ap.add_argument("--paths", default="default,on-demand,self-join")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--text", default="title+abstract")
    ap.add_argument("--python", default=shutil.which("python3"))
    ap.add_argument("--peer-max-cutoffs", type=int, default=50,
                    help="skip the script above this many cutoffs (one self-join each: hours at 1,000); "
                         "the engine's paths are then checked against the first of --paths")
    args = ap.parse_args()
    args.corpus_npy = f"{args.corpus}/vectors.npy"
    vectors = np.load(args.corpus_npy, mmap_mode="r")
    dates = corpus_dates(args.corpus)
    model, flags = cpu_name()
    rows = []
    for n in [int(x) for x in args.ideas.split(",")]:
        for c in [int(x) for x in args.cutoffs.split(",")]:
            work = f"{args.work}/n{n}-c{c}"
            os.makedirs(work, exist_ok=True)
            limits, distinct = make_ideas(work, np.asarray(vectors), dates, n, c, seed=52)
            run_peer = c <= args.peer_max_cutoffs
            peer, peer_rnd = peer_run(args, work) if run_peer else (None, None)
            base = {"date": time.strftime("%Y-%m-%d"), "cpu": model, "flags": flags, "threads": args.threads,
                    "corpus_rows": len(vectors), "dim": vectors.shape[1], "text": args.text, "ideas": n,
                    "cutoffs": distinct if c else 0, "load_before": os.getloadavg()[0]}
            first = len(rows)
            if run_peer:
                rows.append({**base, "tool": "faiss+numpy", **peer})
            for path in args.paths.split(","):
                stats, rnd, searchable, paths = engine_run(args, work, path)
                assert (searchable == limits).all(), "the engine searched other prefixes than the script"
                if peer_rnd is None:
                    peer_rnd = rnd  # without the script: each path against the first
                row = {**base, "tool": f"novelty {path}", **stats, "densities_path": paths,
                       "rnd_equal": int((rnd == peer_rnd).sum()), "rnd_max_diff": float(np.abs(rnd - peer_rnd).max())}
                if run_peer:
                    row["speedup_vs_peer"] = round(peer["wall_s"] / stats["wall_s"], 2)
                    row["cpu_speedup_vs_peer"] = round(peer["cpu_s"] / stats["cpu_s"], 2)
                rows.append(row)
            with open(args.results, "a") as out:
                for r in rows[first:]:
                    out.write(json.dumps(r) + "\n")
    print(f"CPU: {model} ({' '.join(flags)}), {args.threads} threads, corpus {len(vectors):,} x {vectors.shape[1]} ({args.text})")
    print("| ideas | cutoffs | run | wall s | CPU s | peak MiB | vs script (wall) | vs script (CPU) | RND equal |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['ideas']:,} | {r['cutoffs']} | {r['tool']} | {r['wall_s']} | {r['cpu_s']} | {r['peak_mb']} | "
              f"{r.get('speedup_vs_peer', '-')}x | {r.get('cpu_speedup_vs_peer', '-')}x | {r.get('rnd_equal', '-')} |")


if __name__ == "__main__":
    main()
