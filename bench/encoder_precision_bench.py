#!/usr/bin/env python3
"""The CPU encoder at each precision (f32, bf16, int8), side by side in one run, on real abstracts.

Takes N abstracts spread over the ML corpus (title + blank line + abstract, as the engine joins
them), embeds them with encoder_bench at each precision, each run in its own process, alternating
`repeat` times with 1 and 2 threads, and reports texts/s, tokens/s, the ratio to f32 in the same
run, the cosines of every precision's vectors to f32's, and peak memory. When sentence-transformers
(PyTorch) is importable in this Python, it runs in the same alternation as a peer (float32); when
ONNX Runtime and PyTorch are too, the same weights are exported to ONNX here (torch.onnx, from the
local model directory: no model hub) and ONNX Runtime runs them in float32 and after
quantize_dynamic to int8, with its defaults and per channel. The peers tokenize with the model's
own tokenizer (transformers), batch 32 texts of similar length with padding, as sentence-transformers
does, and pool and normalise as the model's configuration says (mean). When a peer is missing, the
record says so. The load of the machine (uptime before and after) and the CPU's
instruction-set flags go in the record, because on a shared machine only ratios within one run
mean anything. Appends one JSON line per configuration to --results.
Usage: bench/run_encoder_precision_bench.sh [--n 2000] [--repeat 3] [--threads 1,2] [--precisions f32,bf16,int8]
"""
import argparse
import datetime
import gzip
import json
import os
import subprocess
import sys
import time

import numpy as np

from bench_common import median_run, peak_rss_mb, run_child

FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8")


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                have = set(line.split(":", 1)[1].split())
                return [flag for flag in FLAGS if flag in have]
    return []


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return ""


def load_average():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def st_job(args):
    import torch
    torch.set_num_threads(args.threads)
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(args.model, device="cpu")
    texts = read_texts(args.records)
    start = time.perf_counter()
    vectors = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    seconds = time.perf_counter() - start
    np.save(args.out, vectors.astype(np.float32))
    print(json.dumps({"texts": len(texts), "seconds": seconds, "per_second": len(texts) / seconds,
                      "peak_rss_mb": peak_rss_mb()}))


def read_texts(path):
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    return [r["title"].strip() + "\n\n" + r["text"].strip() for r in records]


ORT_PEERS = {"onnxruntime-f32": "model.onnx", "onnxruntime-int8": "model_int8.onnx",
             "onnxruntime-int8-per-channel": "model_int8_pc.onnx"}


def export_onnx(model_dir, work):
    """all-MiniLM-L6-v2's transformer exported to work/model.onnx (dynamic batch and length), and
    its two quantize_dynamic int8 variants beside it. Runs in a child process: it imports PyTorch."""
    import torch
    from transformers import AutoModel
    from onnxruntime.quantization import QuantType, quantize_dynamic
    class Transformer(torch.nn.Module):  # the three inputs by name, whatever forward's order is
        def __init__(self):
            super().__init__()
            self.inner = AutoModel.from_pretrained(model_dir).eval()

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    model = Transformer().eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    path = os.path.join(work, ORT_PEERS["onnxruntime-f32"])
    with torch.no_grad():
        torch.onnx.export(model, (ids, ids, torch.zeros_like(ids)), path, dynamo=False,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"], opset_version=17,
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                        "last_hidden_state": axes})
    quantize_dynamic(path, os.path.join(work, ORT_PEERS["onnxruntime-int8"]), weight_type=QuantType.QInt8)
    quantize_dynamic(path, os.path.join(work, ORT_PEERS["onnxruntime-int8-per-channel"]),
                     weight_type=QuantType.QInt8, per_channel=True)


def ort_job(args):
    """One ONNX Runtime run: tokenize, batch by length, run, mean-pool, normalise."""
    import onnxruntime as ort
    from transformers import AutoTokenizer
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(args.onnx, options, providers=["CPUExecutionProvider"])
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    texts = read_texts(args.records)
    start = time.perf_counter()
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    vectors = None
    for b in range(0, len(order), 32):
        batch = order[b:b + 32]
        enc = tokenizer([texts[i] for i in batch], padding=True, truncation=True, max_length=256, return_tensors="np")
        feed = {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
        hidden = session.run(None, feed)[0]
        mask = enc["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        if vectors is None:
            vectors = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
        vectors[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    seconds = time.perf_counter() - start
    np.save(args.out, vectors)
    print(json.dumps({"texts": len(texts), "seconds": seconds, "per_second": len(texts) / seconds,
                      "peak_rss_mb": peak_rss_mb()}))


def write_records(data, n, path):
    """N records spread evenly over the file (it is ordered by venue and year)."""
    with gzip.open(data, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    rows = [r for r in rows if r.get("title") and r.get("abstract")]
    stride = max(1, len(rows) // n)
    with open(path, "w", encoding="utf-8") as out:
        for i, r in enumerate(rows[::stride][:n]):  # the file repeats some ids: make them unique
            out.write(json.dumps({"id": f"{i}:{r['id']}", "title": r["title"], "text": r["abstract"]}) + "\n")


def cosines(a, b):
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def demo_top10(args, env):
    """The 20 demo ideas embedded at each precision against the 3,300 committed demo vectors: for
    how many ideas the 10 nearest papers (as a set) are float32's, and, for the others, the gap
    between float32's 10th and 11th similarity."""
    vectors = np.load(args.demo_vectors).astype(np.float32)
    out = {}
    for precision in args.precisions.split(","):
        path = os.path.join(args.work, f"ideas_{precision}.npy")
        run_child([args.engine, args.model, args.ideas, path, "2", "cpu", "", "0", precision], env)
        out[precision] = np.load(path) @ vectors.T
    reference = out["f32"]
    result = {}
    for precision, sims in out.items():
        same, gaps = 0, []
        for want, got in zip(reference, sims):
            order = np.argsort(-want, kind="stable")
            if set(order[:10]) == set(np.argsort(-got, kind="stable")[:10]):
                same += 1
            else:
                gaps.append(round(float(want[order[9]] - want[order[10]]), 6))
        result[precision] = {"same_top10": same, "ideas": len(reference), "f32_gap_10_11_where_different": gaps,
                             "max_similarity_change": round(float(np.abs(sims - reference).max()), 6)}
    return result


def have_sentence_transformers():
    try:
        import sentence_transformers  # noqa: F401
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def have_onnxruntime():
    try:
        import onnxruntime  # noqa: F401
        import onnxruntime.quantization  # noqa: F401
        import transformers  # noqa: F401
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def peer_command(args, peer, records, threads):
    """The command line of one peer's run (this script in a child process)."""
    out = os.path.join(args.work, peer + ".npy")
    cmd = [sys.executable, __file__, "--model", args.model, "--records", records, "--out", out, "--threads", str(threads)]
    if peer == "sentence-transformers":
        return cmd + ["--st-job"]
    return cmd + ["--ort-job", "--onnx", os.path.join(args.work, ORT_PEERS[peer])]


def missing_peers(peers):
    missing = []
    if "sentence-transformers" not in peers:
        missing.append("sentence-transformers (not installed in this Python)")
    if "onnxruntime-f32" not in peers:
        missing.append("onnxruntime (onnxruntime, transformers and torch for the export not installed in this Python)")
    return missing


def add_peer_ratios(lines):
    """Each line's texts/s over sentence-transformers' and ONNX Runtime int8's (defaults) at the
    same thread count, where those peers ran."""
    for peer, key in (("sentence-transformers", "ratio_to_sentence_transformers"),
                      ("onnxruntime-int8", "ratio_to_onnxruntime_int8")):
        for line in lines:
            base = [o["texts_per_s"] for o in lines if o["system"] == peer and o["threads"] == line["threads"]]
            if base:
                line[key] = round(line["texts_per_s"] / base[0], 3)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--engine")
    p.add_argument("--model")
    p.add_argument("--data")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--precisions", default="f32,bf16,int8")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--work", default="/tmp/novelty-encoder-precision-bench")
    p.add_argument("--results", default=None)
    p.add_argument("--ideas", default=None, help="data/ideas.jsonl: also measure the demo ideas' top 10")
    p.add_argument("--demo-vectors", default=None, help="data/demo/vectors_minilm_f16.npy")
    p.add_argument("--st-job", action="store_true")
    p.add_argument("--ort-job", action="store_true")
    p.add_argument("--export-job", action="store_true")
    p.add_argument("--onnx")
    p.add_argument("--records")
    p.add_argument("--out")
    args = p.parse_args()
    if args.st_job or args.ort_job:
        args.threads = int(args.threads)
        (st_job if args.st_job else ort_job)(args)
        return
    if args.export_job:
        export_onnx(args.model, args.work)
        return
    os.makedirs(args.work, exist_ok=True)
    records = os.path.join(args.work, f"abstracts_{args.n}.jsonl")
    write_records(args.data, args.n, records)
    precisions = args.precisions.split(",")
    peers = ["sentence-transformers"] if have_sentence_transformers() else []
    if have_onnxruntime():
        subprocess.run([sys.executable, __file__, "--export-job", "--model", args.model, "--work", args.work], check=True)
        peers += list(ORT_PEERS)
    load_before = load_average()
    lines = []
    for threads in [int(t) for t in args.threads.split(",")]:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="false")
        runs = {name: [] for name in precisions + peers}
        for _ in range(args.repeat):  # alternating: every system sees the same load in turn
            for precision in precisions:
                out = os.path.join(args.work, f"{precision}.npy")
                runs[precision].append(run_child([args.engine, args.model, records, out, str(threads), "cpu", "", "0",
                                                  precision], env))
            for peer in peers:
                runs[peer].append(run_child(peer_command(args, peer, records, threads), env))
        reference = np.load(os.path.join(args.work, "f32.npy"))
        f32_speed = median_run(runs["f32"])["per_second"]
        for name, rs in runs.items():
            med = median_run(rs)
            vectors = np.load(os.path.join(args.work, f"{name}.npy"))
            cos = cosines(vectors, reference)
            tokens = runs[precisions[0]][0]["tokens"]
            lines.append({
                "system": "engine" if name in precisions else name,
                "precision": med.get("precision", "f32") if name in precisions else ("int8" if "int8" in name else "f32"),
                "asked": name if name in precisions else "f32",
                "threads": threads, "texts": med["texts"], "tokens": tokens,
                "seconds": [round(r["seconds"], 3) for r in rs], "median_seconds": round(med["seconds"], 3),
                "texts_per_s": round(med["per_second"], 2), "tokens_per_s": round(tokens / med["seconds"], 1),
                "ratio_to_engine_f32": round(med["per_second"] / f32_speed, 3),
                "cosine_to_f32_min": round(float(cos.min()), 6), "cosine_to_f32_mean": round(float(cos.mean()), 6),
                "peak_rss_mb": round(med["peak_rss_mb"], 1),
            })
    add_peer_ratios(lines)
    top10 = demo_top10(args, dict(os.environ)) if args.ideas else None
    common = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "bench": "encoder_precision", "model": os.path.basename(os.path.normpath(args.model)),
              "cpu": cpu_model(), "cpu_flags": cpu_flags(), "cores": os.cpu_count(),
              "load_before": load_before, "load_after": load_average(), "repeat": args.repeat,
              "peers_missing": missing_peers(peers)}
    print("| threads | system | precision | texts/s | tokens/s | ratio to engine f32 | cosine to f32 min / mean | peak RSS |")
    print("|---|---|---|---|---|---|---|---|")
    for line in lines:
        print(f"| {line['threads']} | {line['system']} | {line['precision']} | {line['texts_per_s']} | "
              f"{line['tokens_per_s']:,.0f} | {line['ratio_to_engine_f32']:.3f} | {line['cosine_to_f32_min']:.6f} / "
              f"{line['cosine_to_f32_mean']:.6f} | {line['peak_rss_mb']:,.0f} MB |")
    print(f"load before: {common['load_before']}\nload after: {common['load_after']}")
    if top10:
        print("demo ideas, same top 10 as f32:", json.dumps(top10))
        common["demo_top10"] = top10
    if args.results:
        with open(args.results, "a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps({**common, **line}) + "\n")


if __name__ == "__main__":
    main()
