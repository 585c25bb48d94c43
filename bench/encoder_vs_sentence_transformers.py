#!/usr/bin/env python3
"""The built-in encoder against sentence-transformers on the CPU, same texts, same thread count.

Takes the first N abstracts of the ML corpus (title + blank line + abstract, as the engine joins
them), embeds them with all-MiniLM-L6-v2 in both, each in its own process, alternating `repeat`
times, and prints throughput, the ratio, peak memory and the cosine agreement of the vectors.
Usage: bench/run_encoder_bench.sh [--n 1000] [--threads 2]
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

import numpy as np

from bench_common import median_run, peak_rss_mb, run_child


def st_job(args):
    import torch
    torch.set_num_threads(args.threads)
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(args.model, device="cpu")
    texts = []
    with open(args.records, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            texts.append(r["title"].strip() + "\n\n" + r["text"].strip())
    start = time.perf_counter()
    vectors = model.encode(texts, batch_size=args.batch, normalize_embeddings=True, convert_to_numpy=True)
    seconds = time.perf_counter() - start
    np.save(args.out, vectors.astype(np.float32))
    print(json.dumps({"texts": len(texts), "seconds": seconds, "per_second": len(texts) / seconds,
                      "peak_rss_mb": peak_rss_mb()}))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--engine")
    p.add_argument("--model")
    p.add_argument("--data", default=None)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--work", default="/tmp/novelty-encoder-bench")
    p.add_argument("--st-job", action="store_true")
    p.add_argument("--records")
    p.add_argument("--out")
    args = p.parse_args()
    if args.st_job:
        st_job(args)
        return
    os.makedirs(args.work, exist_ok=True)
    records = os.path.join(args.work, f"abstracts_{args.n}.jsonl")
    with gzip.open(args.data, "rt", encoding="utf-8") as f, open(records, "w", encoding="utf-8") as out:
        n = 0
        for line in f:
            r = json.loads(line)
            if r.get("title") and r.get("abstract"):
                out.write(json.dumps({"id": r["id"], "title": r["title"], "text": r["abstract"]}) + "\n")
                n += 1
                if n == args.n:
                    break
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), TOKENIZERS_PARALLELISM="false")
    ours_runs, st_runs = [], []
    for _ in range(args.repeat):
        ours_runs.append(run_child([args.engine, args.model, records, os.path.join(args.work, "ours.npy"), str(args.threads)], env))
        st_runs.append(run_child([sys.executable, __file__, "--st-job", "--model", args.model, "--records", records,
                            "--out", os.path.join(args.work, "st.npy"), "--threads", str(args.threads),
                            "--batch", str(args.batch)], env))
    a, b = median_run(ours_runs), median_run(st_runs)
    ours = np.load(os.path.join(args.work, "ours.npy"))
    theirs = np.load(os.path.join(args.work, "st.npy"))
    cos = np.sum(ours * theirs, axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    print(f"\nthreads: {args.threads}; texts: {args.n}; sentence-transformers batch {args.batch}; runs: {args.repeat} "
          f"(median shown, all in brackets)")
    print("| encoder | ours | sentence-transformers | ratio (ours / theirs) | cosine min / mean | peak RSS ours / theirs |")
    print("|---|---|---|---|---|---|")
    print(f"| all-MiniLM-L6-v2, {args.n:,} abstracts | {a['per_second']:.1f} texts/s ({a['seconds']:.2f} s "
          f"{[round(r['seconds'], 2) for r in ours_runs]}) | {b['per_second']:.1f} texts/s ({b['seconds']:.2f} s "
          f"{[round(r['seconds'], 2) for r in st_runs]}) | {a['per_second'] / b['per_second']:.2f} | "
          f"{cos.min():.6f} / {cos.mean():.6f} | {a['peak_rss_mb']:,.0f} / {b['peak_rss_mb']:,.0f} MB |")


if __name__ == "__main__":
    main()
