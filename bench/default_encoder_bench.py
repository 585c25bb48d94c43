#!/usr/bin/env python3
"""The default encoder as a user runs it against its peers, whole process, on real abstracts.

`novelty embed` with no precision flag (so `--precision auto`, resolved by its calibration on this
CPU; the calibration itself is timed once, from an empty cache, and reported apart), and at
`--precision f32` for reference, against sentence-transformers (PyTorch float32) and ONNX Runtime
int8 per channel (quantize_dynamic of the same all-MiniLM-L6-v2 weights exported locally; the
jobs of bench/encoder_precision_bench.py). Every run is one process timed from start to exit
(reading the abstracts, loading the model, embedding, writing the .npy; Python's imports
included), the systems alternating `repeat` times at `threads` threads; the median is reported.
Cosines compare each system's vectors with the engine's float32 vectors text by text. The CPU's
model and instruction-set flags and the load average before and after go in every record: on a
shared machine only ratios within one run mean anything. Appends one JSON line per system to
--results and prints a Markdown table.
Usage: bench/run_default_encoder_bench.sh [--n 2000] [--repeat 3] [--threads 2]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import encoder_precision_bench as peers

ORT_INT8_PC = "onnxruntime-int8-per-channel"


def timed(cmd, env):
    """Seconds a command takes from start to exit (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def resolve_auto(novelty, threads, env):
    """`novelty info --json` from an empty cache: what auto chose, why, and the seconds it took."""
    start = time.perf_counter()
    out = subprocess.run([novelty, "info", "--json", "--threads", str(threads)], check=True, env=env,
                         capture_output=True, text=True).stdout
    return json.loads(out)["encoder_precision"], time.perf_counter() - start


def commands(args, records, available):
    """Each system's command line (its output .npy in args.work)."""
    engine = [args.novelty, "embed", "-q", "--in", records, "--threads", str(args.threads), "--device", "cpu"]
    out = {"engine default": engine + ["--out", os.path.join(args.work, "default.npy")],
           "engine f32": engine + ["--precision", "f32", "--out", os.path.join(args.work, "f32.npy")]}
    peer_args = argparse.Namespace(model=args.model, work=args.work)
    for peer in available:
        out[peer] = peers.peer_command(peer_args, peer, records, args.threads)
    return out


def npy_of(args, system):
    return os.path.join(args.work, {"engine default": "default.npy", "engine f32": "f32.npy"}.get(system, system + ".npy"))


def summarise(args, runs, auto, calibration_seconds, load_before):
    reference = np.load(npy_of(args, "engine f32"))
    medians = {name: sorted(times)[len(times) // 2] for name, times in runs.items()}
    common = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "bench": "default_encoder", "model": os.path.basename(os.path.normpath(args.model)),
              "cpu": peers.cpu_model(), "cpu_flags": peers.cpu_flags(), "cores": os.cpu_count(),
              "threads": args.threads, "texts": args.n, "repeat": args.repeat,
              "auto_precision": auto["precision"], "auto_reason": auto["reason"],
              "calibration_seconds": round(calibration_seconds, 2),
              "load_before": load_before, "load_after": peers.load_average()}
    lines = []
    for name, seconds in medians.items():
        cos = peers.cosines(np.load(npy_of(args, name)), reference)
        line = {**common, "system": name, "seconds": [round(s, 2) for s in runs[name]],
                "median_seconds": round(seconds, 2), "texts_per_s": round(args.n / seconds, 2),
                "cosine_to_f32_min": round(float(cos.min()), 6), "cosine_to_f32_mean": round(float(cos.mean()), 6)}
        for peer, key in (("sentence-transformers", "ratio_to_sentence_transformers"),
                          (ORT_INT8_PC, "ratio_to_onnxruntime_int8_per_channel")):
            if peer in medians:
                line[key] = round(medians[peer] / seconds, 3)
        lines.append(line)
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--novelty", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--work", default="/tmp/novelty-default-encoder-bench")
    p.add_argument("--results", default=None)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    records = os.path.join(args.work, f"abstracts_{args.n}.jsonl")
    peers.write_records(args.data, args.n, records)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), TOKENIZERS_PARALLELISM="false",
               XDG_CACHE_HOME=tempfile.mkdtemp(prefix="cache-", dir=args.work))
    env.pop("NOVELTY_AUTO_PRECISION", None)  # the default as a user gets it
    load_before = peers.load_average()
    auto, calibration_seconds = resolve_auto(args.novelty, args.threads, env)
    available = (["sentence-transformers"] if peers.have_sentence_transformers() else [])
    if peers.have_onnxruntime():
        subprocess.run([sys.executable, peers.__file__, "--export-job", "--model", args.model, "--work", args.work],
                       check=True)
        available.append(ORT_INT8_PC)
    cmds = commands(args, records, available)
    runs = {name: [] for name in cmds}
    for _ in range(args.repeat):  # alternating: every system sees the same load in turn
        for name, cmd in cmds.items():
            runs[name].append(timed(cmd, env))
    lines = summarise(args, runs, auto, calibration_seconds, load_before)
    print(f"CPU: {lines[0]['cpu']} ({', '.join(lines[0]['cpu_flags'])}); {args.threads} threads; {args.n} abstracts")
    print(f"auto: {auto['precision']} ({auto['reason']}); calibration {calibration_seconds:.1f} s, once")
    print("| system | seconds (median) [all] | texts/s | cosine to f32 min / mean | vs sentence-transformers | vs ORT int8 per channel |")
    print("|---|---|---|---|---|---|")
    for l in lines:
        print(f"| {l['system']} | {l['median_seconds']} {l['seconds']} | {l['texts_per_s']} | {l['cosine_to_f32_min']:.6f} / "
              f"{l['cosine_to_f32_mean']:.6f} | {l.get('ratio_to_sentence_transformers', '')} | "
              f"{l.get('ratio_to_onnxruntime_int8_per_channel', '')} |")
    print(f"load before: {lines[0]['load_before']}\nload after: {lines[0]['load_after']}")
    if not available:
        print("peers missing: install bench/requirements-encoder.txt (bench/run_default_encoder_bench.sh does)")
    if args.results:
        with open(args.results, "a", encoding="utf-8") as f:
            for l in lines:
                f.write(json.dumps(l) + "\n")


if __name__ == "__main__":
    main()
