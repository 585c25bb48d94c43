#!/usr/bin/env python3
"""The PyTorch peer for the CUDA backend: what a researcher would write instead.

Exact cosine top-k with torch.matmul + torch.topk over query tiles, on a float16 corpus that is
already on the GPU, and the self-join (each row's q nearest other rows, then the mean cosine
distance). Random unit vectors of the same shapes as bench/cuda_search_bench.cpp. Prints one JSON
object per measurement. Times include moving the results to the host, as the engine's do.

    cuda_search_vs_torch.py search --rows N --queries Q --dim D --k K [--reps R] [--tile T]
    cuda_search_vs_torch.py selfjoin --rows N --dim D --q Q [--tile T]
"""
import argparse
import json
import statistics
import time

import torch


def random_unit(n, dim, seed, device):
    gen = torch.Generator(device=device).manual_seed(seed)
    out = torch.empty((n, dim), dtype=torch.float16, device=device)
    step = 1 << 16
    for first in range(0, n, step):
        block = torch.randn((min(step, n - first), dim), generator=gen, device=device, dtype=torch.float32)
        out[first:first + block.shape[0]] = torch.nn.functional.normalize(block, dim=1).half()
    return out


def search(corpus, queries, k, tile):
    vals, idx = [], []
    for first in range(0, queries.shape[0], tile):
        sims = queries[first:first + tile] @ corpus.T
        v, i = torch.topk(sims, k, dim=1)
        vals.append(v)
        idx.append(i)
    return torch.cat(vals).float().cpu(), torch.cat(idx).cpu()


def self_join(corpus, q, tile):
    n = corpus.shape[0]
    densities = []
    for first in range(0, n, tile):
        rows = min(tile, n - first)
        sims = corpus[first:first + rows] @ corpus.T
        sims[torch.arange(rows, device=corpus.device), torch.arange(first, first + rows, device=corpus.device)] = -float("inf")
        v, _ = torch.topk(sims, q, dim=1)
        densities.append((1.0 - v.float()).mean(dim=1))
    return torch.cat(densities).cpu()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["search", "selfjoin"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--q", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tile", type=int, default=4096)
    args = parser.parse_args()
    device = torch.device("cuda")
    corpus = random_unit(args.rows, args.dim, 1, device)
    torch.cuda.synchronize()
    if args.mode == "search":
        queries = random_unit(args.queries, args.dim, 2, device)
        search(corpus, queries[:args.tile], args.k, args.tile)  # warm-up
        times = []
        for _ in range(args.reps):
            torch.cuda.synchronize()
            start = time.perf_counter()
            search(corpus, queries, args.k, args.tile)
            times.append(time.perf_counter() - start)
        s = statistics.median(times)
        print(json.dumps({"mode": "search", "peer": "torch", "torch": torch.__version__, "rows": args.rows,
                          "queries": args.queries, "dim": args.dim, "k": args.k, "tile": args.tile,
                          "seconds": round(s, 4), "min_s": round(min(times), 4), "max_s": round(max(times), 4),
                          "queries_per_s": round(args.queries / s, 1)}), flush=True)
    else:
        self_join(corpus[:args.tile], args.q, args.tile)  # warm-up
        torch.cuda.synchronize()
        start = time.perf_counter()
        density = self_join(corpus, args.q, args.tile)
        s = time.perf_counter() - start
        print(json.dumps({"mode": "selfjoin", "peer": "torch", "torch": torch.__version__, "rows": args.rows,
                          "dim": args.dim, "q": args.q, "tile": args.tile, "seconds": round(s, 3),
                          "mean_density": round(float(density.mean()), 6)}), flush=True)


if __name__ == "__main__":
    main()
