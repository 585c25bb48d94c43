#!/usr/bin/env python3
"""Builds the labelled development set for novelty scores (docs/devset.md) from the two real
files of the shared data folder: the ML paperlists file and the biomedical OpenAlex file.

Standard library only. Deterministic: the same inputs and flags give the same files, byte for
byte (a seeded generator, every choice sorted with ties broken by id).

Writes into --out (each file atomically, temp + rename):
  ml_corpus.jsonl      paperlists records of the ML half of the corpus
  biomed_corpus.jsonl  OpenAlex records of the biomedical half of the corpus
  ideas.jsonl          the ideas to score: {"id", "field", "date", ["title", "text"]}
  labels.jsonl         {"id", "label" (1 novel, 0 not), "field", "rule"}
  devset.json          the flags, the input checksums and the counts

Rules (docs/devset.md gives the reasons):
  ML positives     the orals of --ml-positive-year at the venues of --ml-positive-venues (all of
                   them, or --ml-positives of them drawn with the seed), scored as text with the
                   cutoff of their year, absent from the corpus (the orals not drawn stay in the
                   corpus pool like any paper of that year);
  ML negatives     the --ml-negatives most cited (gs_citation) papers of --ml-negative-years at
                   other venues, scored as corpus papers (themselves left out) at the same cutoff;
  biomed positives --biomed-positives works drawn (seeded) among those from --biomed-recent-from
                   on, each scored as a corpus paper at its own date (itself left out);
  biomed negatives the --biomed-negatives most cited (cited_by_count) works published up to
                   --biomed-old-until, scored as corpus papers against the whole corpus;
  exclusions       --exclude-labels (one or more labels.jsonl of other sets): none of their ids
                   is drawn as an ML negative or a biomedical positive or negative; the ML
                   positives are not filtered (so that a set built with its own orals keeps them);
  ids              the importers' ids: a paperlists key of None becomes venue+year:t-<title hash>,
                   an OpenAlex URL its work key; a repeated id or work keeps its first record;
  corpus           the biomedical works sampled down to --biomed-corpus-size (positives and
                   negatives always kept), and the ML papers up to the positives' year less the
                   positives and NeurIPS from 2019 on, sampled down to --ml-corpus-size (the
                   negatives always kept).
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import sys
import tempfile


def fail(message):
    sys.stderr.write("build_devset: " + message + "\n")
    sys.exit(2)


def read_jsonl(path):
    """Yields (line number, record) of a plain or gzip JSON Lines file; errors name file and line."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    fail("%s:%d: malformed JSON: %s" % (path, number, e))
                if not isinstance(record, dict):
                    fail("%s:%d: expected a JSON object" % (path, number))
                yield number, record
    except OSError as e:
        fail("%s: cannot read: %s" % (path, e))


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_atomically(path, lines):
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".part")
    try:
        os.chmod(temp, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def dumps(record):
    return json.dumps(record, ensure_ascii=False, sort_keys=False)


def require(record, keys, path, number):
    for key in keys:
        if key not in record:
            fail('%s:%d: no "%s"' % (path, number, key))


def int_or(value, default):
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def paperlists_id(record):
    """The id the paperlists importer gives a record: a key of None/null/empty becomes the
    venue+year prefix and the first 12 hex digits of the title's SHA-256 (docs/formats.md)."""
    given = str(record["id"])
    prefix, colon, key = given.rpartition(":")
    if colon and key in ("", "None", "null") and record.get("title"):
        return prefix + ":t-" + hashlib.sha256(record["title"].encode("utf-8")).hexdigest()[:12]
    return given


def work_key(openalex):
    """The id the openalex importer gives a work: its URL reduced to the key (W123...)."""
    return str(openalex).rstrip("/").rsplit("/", 1)[-1]


def load_ml(path, dropped):
    """The records with their corpus ids in "id"; a repeated id keeps its first record."""
    papers, seen = [], set()
    for number, r in read_jsonl(path):
        require(r, ("id", "venue", "year", "title"), path, number)
        if not isinstance(r["year"], int):
            fail('%s:%d: "year" is not an integer' % (path, number))
        r = dict(r, id=paperlists_id(r))
        if r["id"] in seen:
            dropped["ml_repeated_ids"] += 1
            continue
        seen.add(r["id"])
        papers.append(r)
    return papers


def load_biomed(path, dropped):
    """The works; a work listed twice (in two review sets) keeps its first record."""
    works, seen = [], set()
    for number, r in read_jsonl(path):
        require(r, ("openalex", "year", "title"), path, number)
        key = work_key(r["openalex"])
        if key in seen:
            dropped["biomed_repeated_works"] += 1
            continue
        seen.add(key)
        works.append(r)
    return works


def read_excluded(paths):
    """The ids of labels files (other sets' labels.jsonl): none of them is drawn as a negative or
    a biomedical positive here, so that a confirmation set does not reuse the ideas of the sets it
    confirms."""
    ids = set()
    for path in paths or ():
        for number, r in read_jsonl(path):
            require(r, ("id",), path, number)
            ids.add(str(r["id"]))
    return ids


def ml_half(papers, args, rng):
    venues = set(v.strip().lower() for v in args.ml_positive_venues.split(",") if v.strip())
    first, last = (int(y) for y in args.ml_negative_years.split("-"))
    year = args.ml_positive_year
    positives = sorted((p for p in papers if p["venue"].lower() in venues and p["year"] == year
                        and str(p.get("status", "")).lower() == "oral" and p.get("abstract")),
                       key=lambda p: p["id"])
    if 0 < args.ml_positives < len(positives):
        positives = sorted(rng.sample(positives, args.ml_positives), key=lambda p: p["id"])
    positive_ids = set(p["id"] for p in positives)
    held_out = lambda p: p["venue"].lower() in ("nips", "neurips") and p["year"] >= 2019
    candidates = [p for p in papers if first <= p["year"] <= last and p["venue"].lower() not in venues
                  and int_or(p.get("gs_citation"), -1) >= 0 and p.get("abstract") and not held_out(p)
                  and p["id"] not in args.excluded]
    candidates.sort(key=lambda p: (-p["gs_citation"], p["id"]))
    negatives = candidates[:args.ml_negatives]
    negative_ids = set(p["id"] for p in negatives)
    pool = sorted((p for p in papers if p["year"] <= year and p["id"] not in positive_ids
                   and p["id"] not in negative_ids and not held_out(p)), key=lambda p: p["id"])
    room = max(0, args.ml_corpus_size - len(negatives))
    sample = pool if room >= len(pool) else rng.sample(pool, room)
    corpus = sorted(sample + negatives, key=lambda p: p["id"])
    return positives, negatives, corpus, len(pool) + len(negatives)


def biomed_half(works, args, rng):
    recent = sorted((w for w in works if w["year"] >= args.biomed_recent_from and w.get("date")
                     and w.get("abstract") and work_key(w["openalex"]) not in args.excluded), key=lambda w: work_key(w["openalex"]))
    positives = sorted(rng.sample(recent, min(args.biomed_positives, len(recent))), key=lambda w: work_key(w["openalex"]))
    old = [w for w in works if w["year"] <= args.biomed_old_until and w.get("abstract")
           and work_key(w["openalex"]) not in args.excluded]
    old.sort(key=lambda w: (-int_or(w.get("cited_by_count"), -1), work_key(w["openalex"])))
    negatives = old[:args.biomed_negatives]
    chosen = set(work_key(w["openalex"]) for w in positives + negatives)
    rest = sorted((w for w in works if work_key(w["openalex"]) not in chosen), key=lambda w: work_key(w["openalex"]))
    room = max(0, args.biomed_corpus_size - len(chosen))
    sample = rest if room >= len(rest) else rng.sample(rest, room)
    corpus = sorted(sample + positives + negatives, key=lambda w: work_key(w["openalex"]))
    return positives, negatives, corpus


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ml", default="../shared/data/ml_papers_paperlists.jsonl.gz")
    parser.add_argument("--biomed", default="../shared/data/biomed_synergy_openalex.jsonl.gz")
    parser.add_argument("--out", required=True, help="output folder (created)")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--ml-positive-venues", default="aistats,corl,3dv,www")
    parser.add_argument("--ml-positive-year", type=int, default=2025)
    parser.add_argument("--ml-negative-years", default="2013-2016")
    parser.add_argument("--ml-positives", type=int, default=0,
                        help="ML positives drawn with the seed among the orals (default 0 = all of them)")
    parser.add_argument("--ml-negatives", type=int, default=255)
    parser.add_argument("--ml-corpus-size", type=int, default=3000,
                        help="ML papers in the corpus, negatives included (default 3000; 0 = all)")
    parser.add_argument("--biomed-recent-from", type=int, default=2020)
    parser.add_argument("--biomed-positives", type=int, default=255)
    parser.add_argument("--biomed-old-until", type=int, default=2012)
    parser.add_argument("--biomed-negatives", type=int, default=255)
    parser.add_argument("--biomed-corpus-size", type=int, default=3000,
                        help="biomedical works in the corpus, positives and negatives included (default 3000; 0 = all)")
    parser.add_argument("--exclude-labels", nargs="+", action="extend", default=[], metavar="LABELS",
                        help="labels.jsonl of other sets (one or more; the flag may repeat): their ids are not "
                             "drawn as negatives or biomedical positives (the ML positives are not filtered)")
    args = parser.parse_args()
    args.excluded = read_excluded(args.exclude_labels)
    if args.ml_positives < 0:
        fail("--ml-positives: expected 0 (all the orals) or a positive count")
    if args.ml_corpus_size == 0:
        args.ml_corpus_size = sys.maxsize
    if args.biomed_corpus_size == 0:
        args.biomed_corpus_size = sys.maxsize
    try:
        first, last = (int(y) for y in args.ml_negative_years.split("-"))
        if first > last:
            raise ValueError
    except ValueError:
        fail("--ml-negative-years: expected FIRST-LAST, e.g. 2013-2016")

    rng = random.Random(args.seed)
    dropped = {"ml_repeated_ids": 0, "biomed_repeated_works": 0}
    ml_positives, ml_negatives, ml_corpus, ml_pool = ml_half(load_ml(args.ml, dropped), args, rng)
    works = load_biomed(args.biomed, dropped)
    bio_positives, bio_negatives, bio_corpus = biomed_half(works, args, rng)
    if not ml_positives or not ml_negatives or not bio_positives or not bio_negatives:
        fail("a class is empty (ML %d/%d, biomed %d/%d positives/negatives); check the flags"
             % (len(ml_positives), len(ml_negatives), len(bio_positives), len(bio_negatives)))

    ideas, labels = [], []
    ml_date = str(args.ml_positive_year)
    for p in ml_positives:
        ideas.append({"id": p["id"], "field": "ml", "date": ml_date, "title": p["title"], "text": p["abstract"]})
        labels.append({"id": p["id"], "label": 1, "field": "ml", "rule": "%s %d oral" % (p["venue"], p["year"])})
    for p in ml_negatives:
        ideas.append({"id": p["id"], "field": "ml", "date": ml_date})
        labels.append({"id": p["id"], "label": 0, "field": "ml",
                       "rule": "%s %d, %d citations" % (p["venue"], p["year"], p["gs_citation"])})
    for w in bio_positives:
        ideas.append({"id": work_key(w["openalex"]), "field": "biomed", "date": w["date"]})
        labels.append({"id": work_key(w["openalex"]), "label": 1, "field": "biomed", "rule": "recent, %s" % w["date"]})
    for w in bio_negatives:
        ideas.append({"id": work_key(w["openalex"]), "field": "biomed"})
        labels.append({"id": work_key(w["openalex"]), "label": 0, "field": "biomed",
                       "rule": "%d, %d citations" % (w["year"], int_or(w.get("cited_by_count"), -1))})

    os.makedirs(args.out, exist_ok=True)
    write_atomically(os.path.join(args.out, "ml_corpus.jsonl"), (dumps(p) for p in ml_corpus))
    write_atomically(os.path.join(args.out, "biomed_corpus.jsonl"), (dumps(w) for w in bio_corpus))
    write_atomically(os.path.join(args.out, "ideas.jsonl"), (dumps(i) for i in ideas))
    write_atomically(os.path.join(args.out, "labels.jsonl"), (dumps(l) for l in labels))
    summary = {
        "flags": {k: (v if v != sys.maxsize else 0) for k, v in sorted(vars(args).items())
                  if k not in ("ml", "biomed", "out", "excluded", "exclude_labels")},
        "excluded_ids": len(args.excluded),
        "excluded_from": [os.path.basename(os.path.dirname(os.path.abspath(p))) + "/" + os.path.basename(p)
                          for p in args.exclude_labels],
        "inputs": {os.path.basename(args.ml): sha256_of(args.ml), os.path.basename(args.biomed): sha256_of(args.biomed)},
        "counts": {"ml_positives": len(ml_positives), "ml_negatives": len(ml_negatives),
                   "biomed_positives": len(bio_positives), "biomed_negatives": len(bio_negatives),
                   "ml_corpus": len(ml_corpus), "ml_eligible": ml_pool, "biomed_corpus": len(bio_corpus),
                   "biomed_works": len(works)},
        "dropped": dropped,
    }
    write_atomically(os.path.join(args.out, "devset.json"), [json.dumps(summary, indent=2)])
    sys.stderr.write("build_devset: %s\n" % json.dumps(summary["counts"]))


if __name__ == "__main__":
    main()
