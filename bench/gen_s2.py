#!/usr/bin/env python3
"""Writes Semantic Scholar-style dataset shards for the import and corpus-add benches.

Usage: bench/gen_s2.py OUT_DIR N_PAPERS [--dim D] [--first ID] [--shards S] [--seed S] [--years A-B]
Writes OUT_DIR/papers-partK.jsonl.gz, abstracts-partK.jsonl.gz and (with --dim > 0)
embeddings-specter_v2-partK.jsonl.gz, in the datasets' record shapes (docs/formats.md), with
corpusids FIRST .. FIRST + N - 1, dates spread over the years A-B (default 1990-2024), and random
unit vectors.
Standard library only; deterministic for a seed.
"""
import argparse
import gzip
import json
import math
import os
import random

WORDS = ("model learning neural graph protein cell network language attention retrieval sparse "
         "dense training inference cancer gene therapy clinical trial cohort imaging signal robust "
         "causal bayesian kernel optimisation reinforcement vision speech molecule material").split()


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def paper(rng, cid, years):
    year = rng.randint(*years)
    dated = rng.random() < 0.9
    date = "%04d-%02d-%02d" % (year, rng.randint(1, 12), rng.randint(1, 28)) if dated else None
    return {"corpusid": cid,
            "externalids": {"ACL": None, "DBLP": None, "ArXiv": "%04d.%05d" % (rng.randint(1000, 2412), cid % 100000)
                            if rng.random() < 0.3 else None, "MAG": str(cid * 7), "CorpusId": str(cid),
                            "PubMed": str(cid + 10000000) if rng.random() < 0.3 else None,
                            "DOI": "10.%d/bench.%d" % (1000 + cid % 9000, cid) if rng.random() < 0.7 else None,
                            "PubMedCentral": None},
            "url": "https://www.semanticscholar.org/paper/%040x" % cid,
            "title": text(rng, rng.randint(6, 14)).capitalize(),
            "authors": [{"authorId": str(rng.randint(1, 10 ** 8)), "name": "A. Author"} for _ in range(rng.randint(1, 5))],
            "venue": rng.choice(["", "NeurIPS", "Nature", "The Lancet", "ACL", "PLoS ONE"]),
            "publicationvenueid": None, "year": year, "referencecount": rng.randint(0, 80),
            "citationcount": rng.randint(0, 500), "influentialcitationcount": rng.randint(0, 20),
            "isopenaccess": rng.random() < 0.4,
            "s2fieldsofstudy": [{"category": rng.choice(["Computer Science", "Medicine", "Biology"]),
                                 "source": "s2-fos-model"}],
            "publicationtypes": ["JournalArticle"], "publicationdate": date, "journal": None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("--dim", type=int, default=0)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--years", default="1990-2024")
    a = ap.parse_args()
    years = tuple(int(y) for y in a.years.split("-"))
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    per = (a.n + a.shards - 1) // a.shards
    for s in range(a.shards):
        ids = range(a.first + s * per, a.first + min(a.n, (s + 1) * per))
        with gzip.open(os.path.join(a.out, "papers-part%d.jsonl.gz" % s), "wt", compresslevel=1) as p, \
                gzip.open(os.path.join(a.out, "abstracts-part%d.jsonl.gz" % s), "wt", compresslevel=1) as ab:
            for cid in ids:
                p.write(json.dumps(paper(rng, cid, years)) + "\n")
                abstract = text(rng, rng.randint(40, 120)) if rng.random() < 0.85 else None
                ab.write(json.dumps({"corpusid": cid, "openaccessinfo": None, "abstract": abstract}) + "\n")
        if a.dim > 0:
            with gzip.open(os.path.join(a.out, "embeddings-specter_v2-part%d.jsonl.gz" % s), "wt", compresslevel=1) as e:
                for cid in ids:
                    v = [rng.gauss(0, 1) for _ in range(a.dim)]
                    norm = math.sqrt(sum(x * x for x in v)) or 1.0
                    vec = "[" + ",".join("%.5f" % (x / norm) for x in v) + "]"
                    e.write(json.dumps({"corpusid": cid, "model": "specter_v2", "vector": vec}) + "\n")


if __name__ == "__main__":
    main()
