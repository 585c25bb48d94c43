#!/usr/bin/env python3
"""Build the committed demo corpora under data/demo/ from the full shared data.

Usage: python3 data/make_demo.py [SHARED_DATA_DIR]
SHARED_DATA_DIR defaults to ../shared/data relative to the project root.

Standard library only. The output is deterministic: candidates are ranked by a
SHA-256 hash of a fixed seed and the record id (no dependence on dict order or
on the Python version's random module), records are written as the exact input
lines in input order, and gzip headers carry mtime=0 and no file name, so a
rerun on the same inputs is byte-identical.
"""
import gzip
import hashlib
import json
import os
import re
import sys

SEED = "novelty-demo-v1"

ML_IN = "ml_papers_paperlists.jsonl.gz"
BIO_IN = "biomed_synergy_openalex.jsonl.gz"
ML_OUT = "ml_papers_demo.jsonl.gz"
BIO_OUT = "biomed_demo.jsonl.gz"

ML_TOTAL = 3000

# Papers that data/ideas.jsonl refers to with "close_to"; always included.
ML_PINNED = [
    "3dv2025:0CNSbBa85A",        # LoopSplat (3D Gaussian splatting SLAM, loop closure)
    "iros2021:9636708",          # iNeRF (pose estimation by inverting a NeRF)
    "aistats2022:aa4b4f9158",    # CF-GNNExplainer (counterfactual GNN explanations)
    "acl2021:2021.acl-long.72",  # DeCLUTR (contrastive sentence embeddings)
    "icml2017:754",              # Robust Adversarial Reinforcement Learning
    "iclr2018:rytstxWAW",        # FastGCN (importance-sampled GCN training)
    "acml2024:d2e669fb8c",       # DMPS (diffusion posterior sampling, inverse problems)
    "iros2020:9341668",          # GNNs for decentralized multi-robot path planning
]

# Topic pools: (name, title regex, how many to take). Matched against the title
# only, case-insensitively; a paper counts for the first topic it matches.
ML_TOPICS = [
    ("gaussian_splatting", r"gaussian splatting|\b3DGS\b|gaussian splat", 40),
    ("nerf", r"neural radiance field|\bnerfs?\b", 60),
    ("diffusion", r"diffusion model|denoising diffusion|score-based generative|"
                  r"latent diffusion|diffusion probabilistic", 100),
    ("transformers", r"\btransformers?\b|self-attention|attention mechanism", 120),
    ("llm", r"large language model|\bllms?\b", 100),
    ("gnn", r"graph neural network|graph convolutional network|\bGNNs?\b|"
            r"message[- ]passing neural", 100),
    ("contrastive", r"contrastive learning|contrastive representation|"
                    r"self-supervised representation", 100),
    ("reinforcement_learning", r"reinforcement learning|policy gradient|"
                               r"q-learning|actor-critic", 120),
    ("federated", r"federated learning", 50),
    ("adversarial", r"adversarial (examples|attacks?|robustness)", 60),
    ("grasping", r"\bgrasp(ing)?\b", 60),
]

# Biomedical works that data/ideas.jsonl refers to with "close_to"; always
# included (they must belong to one of BIO_SETS and count towards its quota).
BIO_PINNED = [
    "https://openalex.org/W2070186745",  # hair cortisol record in Cushing's syndrome
]

# Biomedical: (synergy_set, title regex for on-topic records, how many).
# Pinned works first, then on-topic records (title matches), then any others
# if a set runs short; ties broken by hash order.
BIO_SETS = [
    ("Jeyaraman_2020", r"stem cell|mesenchymal|cartilage|osteoarthritis", 60),
    ("Meijboom_2021", r"biosimilar|infliximab|adalimumab|etanercept|CT-P13", 60),
    ("Nelson_2002", r"estrogen|oestrogen|hormone replacement|hormone therapy|menopaus", 60),
    ("Oud_2018", r"borderline personality", 60),
    ("van_der_Valk_2021", r"cortisol", 60),
]

GLITCH = re.compile(r"[A-Za-z]{30,}")  # words run together by PDF extraction


def rank(salt, rid):
    return hashlib.sha256(f"{SEED}:{salt}:{rid}".encode("utf-8")).hexdigest()


def read_lines(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip():
                yield line


def norm_title(t):
    return re.sub(r"[^a-z0-9]+", " ", t.lower()).strip()


def ml_usable(r):
    title = (r.get("title") or "").strip()
    abstract = (r.get("abstract") or "").strip()
    if not title or not abstract:
        return False
    if len(abstract) < 300 or len(abstract) > 3000:
        return False
    if GLITCH.search(abstract) or GLITCH.search(title):
        return False
    return True


def write_gz(path, lines):
    data = "".join(l + "\n" for l in lines).encode("utf-8")
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                           compresslevel=9, mtime=0) as gz:
            gz.write(data)


def select_ml(path):
    # Eligible records: first occurrence of each id and of each normalised title.
    recs = []  # (index, id, record, raw line)
    seen_ids, seen_titles = set(), set()
    for line in read_lines(path):
        r = json.loads(line)
        rid = r.get("id")
        if not rid or rid in seen_ids:
            continue
        seen_ids.add(rid)
        if not ml_usable(r):
            continue
        nt = norm_title(r["title"])
        if nt in seen_titles:
            continue
        seen_titles.add(nt)
        recs.append((len(recs), rid, r, line))
    by_id = {rid: i for i, rid, _, _ in recs}

    chosen = {}  # index -> reason
    for rid in ML_PINNED:
        if rid not in by_id:
            sys.exit(f"pinned id not eligible or missing: {rid}")
        chosen[by_id[rid]] = "pinned"

    topic_counts = {}
    for name, pattern, n in ML_TOPICS:
        rx = re.compile(pattern, re.I)
        cands = [(rank(name, rid), i) for i, rid, r, _ in recs
                 if i not in chosen and rx.search(r["title"])]
        cands.sort()
        for _, i in cands[:n]:
            chosen[i] = name
        topic_counts[name] = min(n, len(cands))

    # Background: spread the rest over venues and years. Each venue gets a
    # quota proportional to sqrt(its eligible count); within a venue, years are
    # visited round-robin (each year's papers in hash order).
    remaining = ML_TOTAL - len(chosen)
    venues = {}
    for i, rid, r, _ in recs:
        if i in chosen:
            continue
        venues.setdefault(r["venue"], {}).setdefault(r["year"], []).append(i)
    weights = {v: sum(len(ys) for ys in yrs.values()) ** 0.5
               for v, yrs in venues.items()}
    wsum = sum(weights.values())
    quota = {v: int(remaining * w / wsum) for v, w in weights.items()}
    # Hand out the rounding remainder to the largest fractional parts.
    short = remaining - sum(quota.values())
    frac = sorted(venues, key=lambda v: (-(remaining * weights[v] / wsum - quota[v]), v))
    for v in frac[:short]:
        quota[v] += 1
    rid_of = {i: rid for i, rid, _, _ in recs}
    order = {}
    for v, yrs in venues.items():
        queues = []
        for y in sorted(yrs):
            queues.append(sorted(yrs[y], key=lambda i: rank("bg", rid_of[i])))
        seq = []
        depth = 0
        while any(depth < len(q) for q in queues):
            for q in queues:
                if depth < len(q):
                    seq.append(q[depth])
            depth += 1
        order[v] = seq
    # If a venue has fewer papers than its quota, pass the excess on.
    spare = 0
    for v in sorted(venues, key=lambda v: len(order[v])):
        take = min(len(order[v]), quota[v] + spare)
        spare = quota[v] + spare - take
        for i in order[v][:take]:
            chosen[i] = "background"
    if len(chosen) != ML_TOTAL:
        sys.exit(f"selected {len(chosen)} ML papers, expected {ML_TOTAL}")

    lines = [line for i, _, _, line in recs if i in chosen]
    return lines, topic_counts, sum(1 for x in chosen.values() if x == "background")


def select_bio(path):
    by_set = {}
    for line in read_lines(path):
        r = json.loads(line)
        if not (r.get("title") or "").strip() or not (r.get("abstract") or "").strip():
            continue
        by_set.setdefault(r.get("synergy_set"), []).append((line, r))
    picked = set()
    counts = {}
    seen_ids = set()
    for name, pattern, n in BIO_SETS:
        rx = re.compile(pattern, re.I)
        items = [(r["openalex"] not in BIO_PINNED, not rx.search(r["title"]),
                  rank(name, r["openalex"]), r["openalex"])
                 for _, r in by_set.get(name, []) if r["openalex"] not in seen_ids]
        items.sort()
        ids = [item[-1] for item in items[:n]]
        seen_ids.update(ids)
        picked.update((name, oid) for oid in ids)
        counts[name] = len(ids)
    for oid in BIO_PINNED:
        if not any(oid == p[1] for p in picked):
            sys.exit(f"pinned biomedical work missing: {oid}")
    lines = []
    for name, _, _ in BIO_SETS:
        for line, r in by_set.get(name, []):
            if (name, r["openalex"]) in picked:
                lines.append(line)
                picked.discard((name, r["openalex"]))  # guard against repeats
    return lines, counts


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "data")
    out_dir = os.path.join(here, "demo")
    os.makedirs(out_dir, exist_ok=True)

    ml_lines, topic_counts, n_bg = select_ml(os.path.join(shared, ML_IN))
    ml_path = os.path.join(out_dir, ML_OUT)
    write_gz(ml_path, ml_lines)

    bio_lines, bio_counts = select_bio(os.path.join(shared, BIO_IN))
    bio_path = os.path.join(out_dir, BIO_OUT)
    write_gz(bio_path, bio_lines)

    print(f"{ML_OUT}: {len(ml_lines)} papers, {os.path.getsize(ml_path)} bytes")
    print(f"  pinned: {len(ML_PINNED)}")
    for name, _, _ in ML_TOPICS:
        print(f"  topic {name}: {topic_counts[name]}")
    print(f"  background (venue/year spread): {n_bg}")
    print(f"{BIO_OUT}: {len(bio_lines)} works, {os.path.getsize(bio_path)} bytes")
    print(f"  pinned: {len(BIO_PINNED)}")
    for name, _, _ in BIO_SETS:
        print(f"  {name}: {bio_counts[name]}")


if __name__ == "__main__":
    main()
