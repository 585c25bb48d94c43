#!/usr/bin/env python3
"""The CUDA encoder against a PyTorch float16 encoder on the same card, same model, same texts.

  python3 bench/encoder_gpu_vs_torch.py --model DIR --ids IDS.txt --ours OURS.npy [--ours-json LINE]

sentence-transformers is not installed on the GPU machine (no network there, and the bundle has
no room for it and transformers), so the peer is its forward pass written out in PyTorch (and, when
--texts is given and sentence-transformers can be imported, sentence-transformers itself too): the same model loaded
from model.safetensors in float16 on the GPU, texts sorted by length and cut into batches padded to
their longest text (as SentenceTransformer.encode does), attention through
torch.nn.functional.scaled_dot_product_attention with the padding mask (transformers' "sdpa" path),
mean or CLS pooling, L2 normalisation. It is given the token ids our tokenizer produced
(IDS.txt, from encoder_bench), so it does not pay for tokenisation while our time does. It tries
batch sizes 32..512 and reports the best, and the cosine of its vectors with ours (OURS.npy).
Prints one JSON line per batch size and a summary line.
"""
import argparse
import json
import os
import struct
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_safetensors(path, device):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F16": torch.float16, "F32": torch.float32, "BF16": torch.bfloat16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=dtypes[info["dtype"]]).reshape(info["shape"])
        out[name.removeprefix("bert.").removeprefix("roberta.")] = t.to(device=device, dtype=torch.float16)
    return out


class Encoder:
    def __init__(self, model_dir, device):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.c = json.load(f)
        self.w = load_safetensors(os.path.join(model_dir, "model.safetensors"), device)
        self.roberta = self.c.get("model_type", "bert") in ("roberta", "xlm-roberta", "camembert")
        self.pad = self.c.get("pad_token_id", 0)
        pooling = os.path.join(model_dir, "1_Pooling", "config.json")
        self.cls = os.path.exists(pooling) and json.load(open(pooling)).get("pooling_mode_cls_token", False)
        self.device = device

    def linear(self, x, name):
        return F.linear(x, self.w[name + ".weight"], self.w[name + ".bias"])

    def layer_norm(self, x, name):
        return F.layer_norm(x, (x.shape[-1],), self.w[name + ".weight"], self.w[name + ".bias"], self.c["layer_norm_eps"])

    @torch.inference_mode()
    def __call__(self, ids, mask):
        c, w = self.c, self.w
        if self.roberta:
            pos = torch.cumsum(mask, 1) * mask + self.pad
        else:
            pos = torch.arange(ids.shape[1], device=self.device).expand_as(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][pos]
        x = self.layer_norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        b, t, h = x.shape
        heads = c["num_attention_heads"]
        attn_mask = mask[:, None, None, :].bool()
        for l in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{l}."
            q, k, v = (self.linear(x, p + "attention.self." + n).view(b, t, heads, h // heads).transpose(1, 2)
                       for n in ("query", "key", "value"))
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask).transpose(1, 2).reshape(b, t, h)
            x = self.layer_norm(self.linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inter = F.gelu(self.linear(x, p + "intermediate.dense"))
            x = self.layer_norm(self.linear(inter, p + "output.dense") + x, p + "output.LayerNorm")
        if self.cls:
            pooled = x[:, 0]
        else:
            m = mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * m).sum(1) / m.sum(1)
        return F.normalize(pooled.float(), dim=-1)


def run(enc, seqs, batch):
    order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
    out = torch.empty(len(seqs), enc.c["hidden_size"], device=enc.device)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        longest = len(seqs[idx[0]])
        ids = torch.full((len(idx), longest), enc.pad, dtype=torch.long)
        mask = torch.zeros((len(idx), longest), dtype=torch.long)
        for r, i in enumerate(idx):
            ids[r, :len(seqs[i])] = torch.tensor(seqs[i])
            mask[r, :len(seqs[i])] = 1
        out[idx] = enc(ids.to(enc.device, non_blocking=True), mask.to(enc.device, non_blocking=True))
    torch.cuda.synchronize()
    return time.perf_counter() - start, out.cpu().numpy()


def sentence_transformers_peer(model_dir, texts_path, label):
    """sentence-transformers itself, float16, when the machine has it (the GPU machine usually does not)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return
    texts = [(r.get("title", "") + "\n\n" + (r.get("text") or r.get("abstract") or "")).strip()
             for r in map(json.loads, open(texts_path, encoding="utf-8"))]
    model = SentenceTransformer(model_dir, device="cuda").half()
    model.encode(texts[:256], batch_size=64)
    for batch in (32, 64, 128, 256, 512):
        torch.cuda.synchronize()
        start = time.perf_counter()
        model.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        print(json.dumps({"mode": "encoder", "peer": "sentence-transformers", "label": label, "batch": batch,
                          "texts": len(texts), "seconds": round(seconds, 4), "per_second": round(len(texts) / seconds, 1)}),
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--ids", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--texts", help="the JSON Lines texts, for sentence-transformers when it is installed")
    args = ap.parse_args()
    if args.texts:
        sentence_transformers_peer(args.model, args.texts, args.label)
    seqs = [[int(v) for v in line.split()] for line in open(args.ids)]
    enc = Encoder(args.model, "cuda")
    run(enc, seqs[:256], 64)  # warm-up: kernels, allocator
    best = None
    for batch in (32, 64, 128, 256, 512):
        seconds, vectors = run(enc, seqs, batch)
        row = {"mode": "encoder", "peer": "torch", "label": args.label, "batch": batch, "texts": len(seqs),
               "seconds": round(seconds, 4), "per_second": round(len(seqs) / seconds, 1)}
        print(json.dumps(row), flush=True)
        if best is None or seconds < best[0]:
            best = (seconds, batch, vectors)
    ours = np.load(args.ours)
    cos = (ours * best[2]).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(best[2], axis=1) + 1e-30)
    print(json.dumps({"mode": "encoder", "peer": "torch-best", "label": args.label, "batch": best[1],
                      "texts": len(seqs), "seconds": round(best[0], 4), "per_second": round(len(seqs) / best[0], 1),
                      "min_cosine_to_ours": float(cos.min()), "mean_cosine_to_ours": float(cos.mean())}))


if __name__ == "__main__":
    main()
