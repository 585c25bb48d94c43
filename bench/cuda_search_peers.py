#!/usr/bin/env python3
"""The exact GPU k-NN engines a user would pick instead of the CUDA backend, on one card.

    cuda_search_peers.py search --rows N --queries Q --dim D --k K [--reps R] [--peers cuvs,faiss,cupy]
                                [--cupy-queries C]

Generates random unit vectors once on the GPU with CuPy (a normal, L2-normalised, float16 as a
corpus's vectors.npy would be), then times each peer on them and prints one JSON object per
peer. A peer that cannot run prints {"available": false, "reason": "..."} instead of a time, so
the results file says why it is missing:

- cuvs:  cuVS brute force (cuvs.neighbors.brute_force): build on the float16 corpus with the
         inner-product metric, then search with float16 queries already on the GPU; neighbours
         and distances copied to the host. Times: build_s, and seconds for the search.
- faiss: FAISS GpuIndexFlatIP with float16 storage (GpuIndexFlatConfig.useFloat16): the corpus
         added from the host, then searched with float32 queries from the host, results on the
         host (the same contract as the engine's search()). Times: build_s (add), seconds.
- cupy:  CuPy's own matmul (float16) + argpartition/argsort over query tiles, results to the
         host: the plain reference a CuPy user would write. Timed on --cupy-queries queries
         (default 4,096) since its selection sorts; queries_per_s is comparable, seconds is not.

Median of --reps timed calls after one untimed warm-up call on a few queries. Nothing here is
installed on the H200 machine except CuPy: docs/benchmarks.md says why cuVS and FAISS are absent.
"""
import argparse
import json
import statistics
import time


def emit(record):
    print(json.dumps(record), flush=True)


def random_unit(cp, n, dim, seed, step=1 << 16):
    rng = cp.random.default_rng(seed)
    out = cp.empty((n, dim), dtype=cp.float16)
    for first in range(0, n, step):
        block = rng.standard_normal((min(step, n - first), dim), dtype=cp.float32)
        block /= cp.linalg.norm(block, axis=1, keepdims=True)
        out[first:first + block.shape[0]] = block.astype(cp.float16)
    cp.cuda.Device().synchronize()
    return out


def timed(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times), result


def run_cuvs(cp, corpus, queries, k, reps):
    from cuvs.neighbors import brute_force  # noqa: PLC0415 (optional dependency)
    import cuvs  # noqa: PLC0415
    start = time.perf_counter()
    index = brute_force.build(corpus, metric="inner_product")
    cp.cuda.Device().synchronize()
    build_s = time.perf_counter() - start

    def search(q):
        distances, neighbors = brute_force.search(index, q, k)
        return cp.asarray(distances).get(), cp.asarray(neighbors).get()

    search(queries[:256])  # warm-up
    s, lo, hi, (dist, _) = timed(lambda: search(queries), reps)
    return {"version": getattr(cuvs, "__version__", "?"), "build_s": round(build_s, 4), "seconds": round(s, 4),
            "min_s": round(lo, 4), "max_s": round(hi, 4), "mean_top1": round(float(dist[:, 0].mean()), 6),
            "queries_on_device": True}


def run_faiss(cp, corpus, queries, k, reps):
    import faiss  # noqa: PLC0415 (optional dependency)
    if not hasattr(faiss, "GpuIndexFlatIP") or faiss.get_num_gpus() < 1:
        raise ImportError(f"faiss {faiss.__version__} is installed without GPU support (or sees no GPU)")
    resources = faiss.StandardGpuResources()
    config = faiss.GpuIndexFlatConfig()
    config.device = 0
    config.useFloat16 = True
    index = faiss.GpuIndexFlatIP(resources, corpus.shape[1], config)
    start = time.perf_counter()
    for first in range(0, corpus.shape[0], 1 << 18):  # from the host, as a user's numpy array
        index.add(corpus[first:first + (1 << 18)].astype(cp.float32).get())
    build_s = time.perf_counter() - start
    host_queries = queries.astype(cp.float32).get()
    index.search(host_queries[:256], k)  # warm-up
    s, lo, hi, (dist, _) = timed(lambda: index.search(host_queries, k), reps)
    return {"version": faiss.__version__, "build_s": round(build_s, 4), "seconds": round(s, 4), "min_s": round(lo, 4),
            "max_s": round(hi, 4), "mean_top1": round(float(dist[:, 0].mean()), 6), "queries_on_device": False}


def run_cupy(cp, corpus, queries, k, reps, tile=1024):
    def search(q):
        vals, idx = [], []
        for first in range(0, q.shape[0], tile):
            sims = q[first:first + tile] @ corpus.T
            top = cp.argpartition(sims, -k, axis=1)[:, -k:]
            top_vals = cp.take_along_axis(sims, top, axis=1)
            order = cp.argsort(-top_vals, axis=1)
            vals.append(cp.take_along_axis(top_vals, order, axis=1))
            idx.append(cp.take_along_axis(top, order, axis=1))
        return cp.concatenate(vals).astype(cp.float32).get(), cp.concatenate(idx).get()

    search(queries[:256])  # warm-up
    s, lo, hi, (dist, _) = timed(lambda: search(queries), reps)
    return {"version": cp.__version__, "seconds": round(s, 4), "min_s": round(lo, 4), "max_s": round(hi, 4),
            "mean_top1": round(float(dist[:, 0].mean()), 6), "queries_on_device": True, "tile": tile}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["search"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--peers", default="cuvs,faiss,cupy")
    parser.add_argument("--cupy-queries", type=int, default=4096)
    args = parser.parse_args()
    base = {"mode": "search", "rows": args.rows, "dim": args.dim, "k": args.k}
    try:
        import cupy as cp  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        for peer in args.peers.split(","):
            emit({**base, "peer": peer, "queries": args.queries, "available": False,
                  "reason": f"not available: CuPy (which makes the data) does not import: {e}"})
        return
    corpus = random_unit(cp, args.rows, args.dim, 1)
    queries = random_unit(cp, args.queries, args.dim, 2)
    runners = {"cuvs": run_cuvs, "faiss": run_faiss, "cupy": run_cupy}
    for peer in args.peers.split(","):
        q = queries[:args.cupy_queries] if peer == "cupy" else queries
        record = {**base, "peer": peer, "queries": int(q.shape[0])}
        try:
            result = runners[peer](cp, corpus, q, args.k, args.reps)
            record.update(result, available=True, queries_per_s=round(q.shape[0] / result["seconds"], 1))
        except ImportError as e:
            record.update(available=False, reason=f"not available: not installed on this machine ({e})")
        except Exception as e:  # noqa: BLE001 (a peer's failure is a result, not a crash)
            record.update(available=False, reason=f"not available: failed: {type(e).__name__}: {e}")
        emit(record)
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
