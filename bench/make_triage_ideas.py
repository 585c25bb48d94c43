#!/usr/bin/env python3
"""Generates the triage evaluation set: N ideas (default 1,000) made from the demo corpus and the
demo ideas, paraphrased and mixed, with near-copies among them (standard library only, seeded).

Kinds (the "kind" key; triage ignores it):
  disguised   a demo paper's abstract reworded (synonyms, sentences dropped and reordered), a new title
  mixed       the opening of one paper's abstract joined to the method of a paper from another venue
  paraphrase  a demo idea (data/ideas.jsonl) reworded
  copy        an earlier generated idea, again, with a few words changed (near-duplicates)
  fresh       a template idea joining a method and an application from distant fields

Usage: make_triage_ideas.py --papers data/demo/ml_papers_demo.jsonl.gz --ideas data/ideas.jsonl \
           [--n 1000] [--seed 7] --out ideas.jsonl
"""
import argparse
import gzip
import json
import random
import re

SYNONYMS = {
    "propose": "introduce", "method": "approach", "approach": "technique", "novel": "new",
    "improve": "enhance", "show": "demonstrate", "results": "findings", "model": "network",
    "task": "problem", "performance": "accuracy", "existing": "prior", "framework": "pipeline",
    "learn": "train", "use": "employ", "large": "big", "significantly": "substantially",
    "demonstrate": "show", "efficient": "fast", "robust": "reliable", "data": "samples",
}
METHODS = ["contrastive pretraining", "diffusion models", "graph neural networks", "reinforcement learning",
           "Bayesian optimisation", "sparse mixture-of-experts", "neural radiance fields", "optimal transport",
           "program synthesis", "federated learning", "symbolic regression", "state-space sequence models"]
DOMAINS = ["crop yield forecasting", "sign language translation", "protein docking", "power grid balancing",
           "wildfire spread prediction", "legal document retrieval", "music transcription", "coral reef monitoring",
           "traffic light control", "antibiotic discovery", "earthquake early warning", "library book recommendation"]


def sentences(text):
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def reword(text, rng, strength):
    words = text.split(" ")
    for i, w in enumerate(words):
        key = w.lower().strip(".,;:")
        if key in SYNONYMS and rng.random() < strength:
            words[i] = w.replace(key, SYNONYMS[key]) if w.islower() else SYNONYMS[key]
    return " ".join(words)


def paraphrase(title, text, rng, strength=0.7):
    parts = sentences(text)
    if len(parts) > 3 and rng.random() < 0.5:
        parts.pop(rng.randrange(1, len(parts)))
    if len(parts) > 2 and rng.random() < 0.5:
        i = rng.randrange(1, len(parts) - 1)
        parts[i], parts[i + 1] = parts[i + 1], parts[i]
    prefix = rng.choice(["", "Towards ", "On ", "Revisiting ", "Rethinking "])
    return prefix + reword(title, rng, strength), reword(" ".join(parts), rng, strength)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", required=True)
    ap.add_argument("--ideas", required=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with gzip.open(args.papers, "rt") as f:
        papers = [json.loads(line) for line in f]
    papers = [p for p in papers if p.get("abstract") and len(sentences(p["abstract"])) >= 3]
    with open(args.ideas) as f:
        demo = [json.loads(line) for line in f]

    out = []
    kinds = ["disguised"] * 25 + ["mixed"] * 25 + ["paraphrase"] * 20 + ["copy"] * 15 + ["fresh"] * 15
    for i in range(args.n):
        kind = rng.choice(kinds) if out else "disguised"
        if kind == "copy" and not out:
            kind = "disguised"
        if kind == "disguised":
            p = rng.choice(papers)
            title, text = paraphrase(p["title"], p["abstract"], rng)
            extra = {"from": p["id"]}
        elif kind == "mixed":
            a, b = rng.sample(papers, 2)
            while a.get("venue") == b.get("venue"):
                a, b = rng.sample(papers, 2)
            sa, sb = sentences(a["abstract"]), sentences(b["abstract"])
            title = a["title"].split(":")[0] + " with " + b["title"].split(":")[-1].strip()
            text = " ".join(sa[: max(1, len(sa) // 2)] + sb[len(sb) // 2:])
            extra = {"from": [a["id"], b["id"]]}
        elif kind == "paraphrase":
            d = rng.choice(demo)
            title, text = paraphrase(d["title"], d["text"], rng)
            extra = {"from": d["id"]}
        elif kind == "copy":
            c = rng.choice(out)
            title, text = reword(c["title"], rng, 0.3), reword(c["text"], rng, 0.3)
            extra = {"from": c["id"]}
        else:
            m, d = rng.choice(METHODS), rng.choice(DOMAINS)
            title = f"{m[0].upper() + m[1:]} for {d}"
            text = (f"We apply {m} to {d}. We collect a new dataset for {d} and compare against classical baselines. "
                    f"We study when {m} helps and release code.")
            extra = {"from": None}
        out.append({"id": f"gen-{i:04d}", "title": title, "text": text, "kind": kind, **extra})
    with open(args.out, "w") as f:
        for record in out:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
