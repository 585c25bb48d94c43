#!/usr/bin/env python3
"""Compares `novelty score` and `novelty search` outputs made with --device cuda and --device cpu
(bench/device_check.sh's CLI check) and prints one JSON line: how many ideas got the same RND,
the largest ND and neighbour-density differences, and the top-k neighbour overlap."""
import json
import os
import sys


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    out = sys.argv[1]
    cuda, cpu = load(os.path.join(out, "score_cuda.jsonl")), load(os.path.join(out, "score_cpu.jsonl"))
    scuda, scpu = load(os.path.join(out, "search_cuda.jsonl")), load(os.path.join(out, "search_cpu.jsonl"))
    if not (cuda and cpu and scuda and scpu):
        print(json.dumps({"mode": "cli", "error": "missing outputs", "ideas": 0, "rnd_equal": 0, "max_nd_diff": -1,
                          "max_density_diff": -1, "search_overlap": -1, "backends": []}))
        return
    rnd_equal = sum(a["scores"]["rnd"] == b["scores"]["rnd"] for a, b in zip(cuda, cpu))
    max_nd = max(abs(a["nd"] - b["nd"]) for a, b in zip(cuda, cpu))
    density = 0.0
    for a, b in zip(cuda, cpu):
        nd_b = {n["id"]: n.get("nd") for n in b["neighbors"]}
        for n in a["neighbors"]:
            if n.get("nd") is not None and nd_b.get(n["id"]) is not None:
                density = max(density, abs(n["nd"] - nd_b[n["id"]]))
    found = total = 0
    for a, b in zip(scuda, scpu):
        ids = {n["id"] for n in a["neighbors"]}
        found += sum(n["id"] in ids for n in b["neighbors"])
        total += len(b["neighbors"])
    # "backend (densities_backend)": which backend searched, and which computed the cached self-join.
    backends = sorted({f'{r["provenance"].get("backend", "?")} ({r["provenance"].get("densities_backend", "?")})'
                       for r in cuda + cpu})
    print(json.dumps({"mode": "cli", "ideas": len(cpu), "rnd_equal": rnd_equal, "max_nd_diff": max_nd,
                      "max_density_diff": density, "search_overlap": found / max(total, 1), "backends": backends}))


if __name__ == "__main__":
    main()
