#!/usr/bin/env python3
"""A model directory with the shape and tokenizer of another but random weights (needs only torch).

  python3 bench/make_random_bert.py SHAPE_DIR OUT_DIR [--dtype float16]

SHAPE_DIR holds config.json and the tokenizer files of a BERT or XLM-RoBERTa model (no weights
needed); OUT_DIR gets copies of them and a model.safetensors of random weights (written here, the
safetensors format being an 8-byte header length, a JSON header and the raw tensors). For device
benchmarks: throughput does not depend on the weights' values, and the GPU machine cannot download
the real ones, nor carry them in the bundle.
"""
import argparse
import json
import os
import shutil
import struct

import torch


def tensors(c):
    h, i, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    shapes = {"embeddings.word_embeddings.weight": (c["vocab_size"], h),
              "embeddings.position_embeddings.weight": (c["max_position_embeddings"], h),
              "embeddings.token_type_embeddings.weight": (c.get("type_vocab_size", 2), h),
              "embeddings.LayerNorm.weight": (h,), "embeddings.LayerNorm.bias": (h,)}
    for l in range(layers):
        p = f"encoder.layer.{l}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[p + name + ".weight"], shapes[p + name + ".bias"] = (h, h), (h,)
        shapes[p + "intermediate.dense.weight"], shapes[p + "intermediate.dense.bias"] = (i, h), (i,)
        shapes[p + "output.dense.weight"], shapes[p + "output.dense.bias"] = (h, i), (h,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"], shapes[p + ln + ".bias"] = (h,), (h,)
    return shapes


def save_safetensors(path, named, dtype_name):
    header, offset, blobs = {}, 0, []
    for name, t in named.items():
        data = t.contiguous().view(torch.uint8).numpy().tobytes() if hasattr(t, "numpy") else bytes(t)
        header[name] = {"dtype": dtype_name, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    args = ap.parse_args()
    shutil.rmtree(args.out_dir, ignore_errors=True)
    shutil.copytree(args.shape_dir, args.out_dir, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    with open(os.path.join(args.shape_dir, "config.json")) as f:
        config = json.load(f)
    gen = torch.Generator().manual_seed(0)
    dtype = torch.float16 if args.dtype == "float16" else torch.float32
    named = {}
    for name, shape in tensors(config).items():
        if name.endswith("LayerNorm.weight"):
            t = torch.ones(shape)
        elif name.endswith("bias") or name.endswith("LayerNorm.bias"):
            t = torch.randn(shape, generator=gen) * 0.02
        else:
            t = torch.randn(shape, generator=gen) * 0.02
        named[name] = t.to(dtype)
    save_safetensors(os.path.join(args.out_dir, "model.safetensors"), named, "F16" if dtype == torch.float16 else "F32")
    print(json.dumps({"model": args.out_dir, "tensors": len(named), "dtype": args.dtype}))


if __name__ == "__main__":
    main()
