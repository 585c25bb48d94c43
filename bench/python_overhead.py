"""Per-call cost of one search through the Python API, the CLI and the HTTP API, for 1 query and
for 10,000 queries (k = 10, vectors given, the demo corpus on the CPU). Prints a Markdown table.

    bench/run_python_bench.sh       (builds build/cpu, imports the demo corpus, runs this)

The Python API keeps its Index between calls; the CLI pays a process, opening the corpus and
writing its output (.npz) per call; the HTTP API pays JSON both ways and a connection per call
(the server keeps its index). Each row is the median of `repeats` calls after one warm-up.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("NOVELTY_BUILD", ROOT / "build" / "cpu"))
sys.path.insert(0, str(BUILD / "python"))
import novelty  # noqa: E402

CLI = str(BUILD / "novelty")
K = 10


def median_seconds(call, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def binding_overhead(index: "novelty.Index", queries: np.ndarray, repeats: int) -> float:
    """Median of (wall time of index.search, arrays only) minus the engine's own time in it."""
    index.search(queries, K, with_ids=False)
    extra = []
    for _ in range(repeats):
        start = time.perf_counter()
        index.search(queries, K, with_ids=False)
        extra.append(time.perf_counter() - start - index._i.last_engine_seconds)
    return statistics.median(extra)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(corpus: str, port: int, threads: int) -> subprocess.Popen:
    server = subprocess.Popen([CLI, "serve", "--corpus", corpus, "--port", str(port), "--threads", str(threads),
                               "--max-records", "10000", "--max-body", str(256 << 20)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("novelty serve did not start")


def http_search(port: int, body: bytes) -> None:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/search", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        json.loads(answer.read())


def main() -> None:
    corpus_dir = sys.argv[1]
    threads = int(os.environ.get("NOVELTY_BENCH_THREADS", "0"))
    index = novelty.Index(corpus_dir, "cpu", threads=threads)
    rng = np.random.default_rng(0)
    rows = []
    port = free_port()
    server = start_server(corpus_dir, port, threads)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n, repeats in ((1, 200), (10_000, 5)):
                queries = rng.standard_normal((n, index.corpus.dim)).astype(np.float32)
                queries /= np.linalg.norm(queries, axis=1, keepdims=True)
                py_ids = median_seconds(lambda: index.search(queries, K), repeats)
                py_arrays = median_seconds(lambda: index.search(queries, K, with_ids=False), repeats)
                overhead = binding_overhead(index, queries, repeats)
                npy = Path(tmp) / f"q{n}.npy"
                np.save(npy, queries)
                cli = median_seconds(lambda: subprocess.run(
                    [CLI, "search", "--corpus", corpus_dir, "--queries", str(npy), "--k", str(K), "--device", "cpu",
                     "--threads", str(threads), "--out", str(Path(tmp) / "hits.npz"), "-q"], check=True),
                    max(3, repeats // 20))
                body = json.dumps({"k": K, "queries": [{"id": str(i), "vector": q.tolist()}
                                                       for i, q in enumerate(queries)]}).encode()
                http = median_seconds(lambda: http_search(port, body), max(3, repeats // 4))
                rows.append((n, overhead, py_arrays, py_ids, cli, http))
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("| queries | Python: binding's own cost | Python, arrays | Python, with ids | CLI (process, .npz) | HTTP (JSON) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, o, a, b, c, d in rows:
        print(f"| {n:,} | {o * 1e6:.0f} µs | {a * 1e3:.2f} ms | {b * 1e3:.2f} ms | {c * 1e3:.1f} ms | {d * 1e3:.1f} ms |")


if __name__ == "__main__":
    main()
