"""Latency of the Semantic Scholar-compatible search of `novelty serve`: 100 sequential
requests shaped like AI-Scientist's novelty check (GET /graph/v1/paper/search with query,
limit=10 and fields=title,authors,venue,year,abstract,citationStyles,citationCount), one
keep-alive connection, each with a different query of the length that loop's search strings
have (a title's worth of words): the 20 demo ideas' titles, then titles of demo papers (every
37th). A few warm-up requests first (the encoder loads on the first text). Prints one JSON
object (latencies, the queries' mean word count, the machine's load average) and appends it to
--out.

    python bench/s2_search_bench.py --base http://127.0.0.1:PORT --corpus-label demo --out FILE.jsonl
"""
import argparse
import datetime
import gzip
import http.client
import json
import os
import statistics
import subprocess
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIELDS = "title,authors,venue,year,abstract,citationStyles,citationCount"


def queries(n):
    out = [json.loads(line)["title"] for line in (ROOT / "data" / "ideas.jsonl").read_text().splitlines() if line]
    with gzip.open(ROOT / "data" / "demo" / "ml_papers_demo.jsonl.gz", "rt", encoding="utf-8") as papers:
        titles = [json.loads(line)["title"] for line in papers]
    out += titles[::37]
    assert len(out) >= n, len(out)
    return out[:n]


def timed_search(connection, host, query, ranking=""):
    params = {"query": query, "limit": 10, "fields": FIELDS}
    if ranking:
        params["ranking"] = ranking  # this server's own parameter; absent = hybrid
    path = "/graph/v1/paper/search?" + urllib.parse.urlencode(params)
    start = time.perf_counter()
    connection.request("GET", path, headers={"Host": host})
    reply = connection.getresponse()
    body = reply.read()
    seconds = time.perf_counter() - start
    assert reply.status == 200, body[:300]
    data = json.loads(body)
    assert len(data["data"]) == 10 and data["total"] >= 10, data
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--ranking", default="", help="hybrid (the default when absent), dense or bm25")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    for q in queries(args.warmup):
        timed_search(connection, url.netloc, "warm up " + q)
    chosen = queries(args.requests)
    ms = [1000 * timed_search(connection, url.netloc, q, args.ranking) for q in chosen]
    ms_sorted = sorted(ms)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    result = {
        "date": datetime.date.today().isoformat(), "engine_commit": commit, "bench": "s2_search",
        "label": args.label, "ranking": args.ranking or "hybrid", "requests": len(ms), "sequential": True, "limit": 10, "fields": FIELDS,
        "p50_ms": round(statistics.median(ms), 3), "p90_ms": round(ms_sorted[int(0.9 * len(ms)) - 1], 3),
        "p99_ms": round(ms_sorted[int(0.99 * len(ms)) - 1], 3), "mean_ms": round(statistics.fmean(ms), 3),
        "min_ms": round(ms_sorted[0], 3), "max_ms": round(ms_sorted[-1], 3),
        "query_words_mean": round(statistics.fmean(len(q.split()) for q in chosen), 1),
        "load_average_1min": round(os.getloadavg()[0], 2), "cores": os.cpu_count(),
    }
    print(json.dumps(result))
    if args.out:
        with open(args.out, "a", encoding="utf-8") as out:
            out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
