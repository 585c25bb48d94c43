"""The cost model of docs/scaling.md: time of a sharded search and self-join on R ranks, from
per-pair compute rates (measured: docs/benchmarks.md, bench/run_mpi_bench.sh), link bandwidths
and the list-merge rate (assumed where not measured; each is a parameter below). Prints the
projection tables for 8 H200s in one box and 64 over InfiniBand, and the H200 count the 250M
self-join needs for one hour. Standard library only: python3 bench/scaling_model.py
"""
import argparse
import math

GB = 1e9


def search_time(n_rows, ranks, p, n_queries=50_000, k=100, dim=1024):
    """Seconds for one call of n_queries: (compute, traffic, merge, stream) parts."""
    rows_per_rank = math.ceil(n_rows / ranks)
    compute = n_queries * rows_per_rank * p["pair_search_s"] * dim / 1024 + p["call_s"]
    stream = 0.0
    if rows_per_rank * dim * 2 > p["device_bytes"]:  # does not fit: streamed through every call
        stream = max(0.0, rows_per_rank * dim * 2 / p["h2d_bytes_s"] - compute)
    stages = math.ceil(math.log2(ranks)) if ranks > 1 else 0  # the broadcast's and the reduction's tree
    queries = n_queries * dim * 4 * stages / p["link_bytes_s"]
    lists = n_queries * k * 8 * stages / p["link_bytes_s"]
    merge = n_queries * k * stages / p["merge_per_s"]
    return compute, queries + lists, merge, stream


def join_time(n_rows, ranks, p, k_stored=58, dim=1024):
    """Seconds for the self-join of n_rows: (compute, traffic, merge) parts."""
    compute = n_rows * math.ceil(n_rows / ranks) * p["pair_join_s"] * dim / 1024
    if ranks == 1:
        return compute, 0.0, 0.0
    corpus = n_rows * dim * 2 * (ranks - 1) / ranks / p["link_bytes_s"]  # allgather, float16 rows
    stages = math.ceil(math.log2(ranks))  # MPI_Reduce's tree: log2 R stages of N x k entries
    lists = n_rows * k_stored * 8 * stages / p["link_bytes_s"]
    merge = n_rows * k_stored * stages / p["merge_per_s"]
    return compute, corpus + lists, merge


def h200(link_gb_s):
    return {
        "pair_search_s": 0.203 / (50_000 * 1e6),  # H200 tile work, 1024-d float16 (benchmarks.md)
        "call_s": 0.36,                           # H200 fixed part of one 50k-query call
        "pair_join_s": 5.60 / 1e12,               # H200 self-join of 1M rows in 5.60 s
        "device_bytes": 0.9 * 141 * GB - 3 * GB,  # 90% budget less work buffers
        "h2d_bytes_s": 50 * GB,                   # PCIe Gen5 x16, streamed corpus
        "link_bytes_s": link_gb_s * GB,
        "merge_per_s": 16 * 1.5e8,                # a rank merging two lists: 16 cores x 1.5e8 entries/s (one core here)
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=float, default=1.0)
    args = parser.parse_args()
    boxes = {"1 H200": (1, h200(1)),
             "8 H200, one box (MPI via host memory, 20 GB/s)": (8, h200(20)),
             "64 H200, 8 boxes, InfiniBand NDR (50 GB/s per GPU)": (64, h200(50))}
    print("| corpus | setup | search 50k queries, k = 100 | self-join, q = 50 | fits on the devices |")
    print("|---|---|---|---|---|")
    for n in (2.6e6, 25e6, 250e6):
        for name, (ranks, p) in boxes.items():
            s = search_time(int(n), ranks, p)
            j = join_time(int(n), ranks, p)
            fits = math.ceil(n / ranks) * 2048 <= p["device_bytes"]
            print(f"| {n / 1e6:g}M | {name} | {sum(s):.2f} s (compute {s[0]:.2f}, traffic {s[1]:.2f}, merge {s[2]:.2f}"
                  f"{', streaming %.1f' % s[3] if s[3] else ''}) | {sum(j) / 3600:.2f} h (compute {j[0]:.0f} s, "
                  f"traffic {j[1]:.0f} s, merge {j[2]:.0f} s) | {'yes' if fits else 'no'} |")
    p = h200(50)
    need = next(r for r in range(1, 4097) if sum(join_time(int(250e6), r, p)) < args.hours * 3600)
    parts = join_time(int(250e6), need, p)
    print(f"250M self-join under {args.hours:g} h: {need} H200s over InfiniBand "
          f"(compute {parts[0]:.0f} s, traffic {parts[1]:.0f} s, merge {parts[2]:.0f} s)")
    p["pair_join_s"] = 2 * 1024 / 770e12  # at the GEMM floor measured on the card
    floor = next(r for r in range(1, 4097) if sum(join_time(int(250e6), r, p)) < args.hours * 3600)
    print(f"  at the card's measured GEMM rate (770 TFLOP/s) instead: {floor} H200s")

if __name__ == "__main__":
    main()
