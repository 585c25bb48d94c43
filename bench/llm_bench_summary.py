"""Figures of bench/run_local_llm_bench.sh: what `novelty claims` and `novelty retrieve --expand
--hyde` wrote against the local LLM, whether every idea and question is accounted for, the LLM
calls, tokens, retries and answers that failed their JSON schema (and how each ended), and the
time. Reads the files the bench left in --work; prints Markdown for docs/benchmarks.md."""
import argparse
import json
import re
from pathlib import Path

USAGE = re.compile(
    r"^novelty: llm (?P<model>\S+) (?P<stage>[\w-]+): (?P<calls>\d+) calls, (?P<cached>\d+) cached, "
    r"(?P<failed>\d+) failed, (?P<prompt>\d+)\+(?P<completion>\d+) tokens"
    r"(?:, (?P<retries>\d+) retries)?"
    r"(?:, (?P<invalid>\d+) invalid answers \((?P<repaired>\d+) repaired, (?P<unrepaired>\d+) not\))?$")


def usage_lines(path):
    """Stage -> counts, from the client's usage report on stderr."""
    out = {}
    for line in Path(path).read_text().splitlines():
        m = USAGE.match(line.strip())
        if m:
            out[m["stage"]] = {k: int(v or 0) for k, v in m.groupdict().items() if k not in ("model", "stage")}
            out[m["stage"]]["model"] = m["model"]
    return out


def seconds(path):
    start, end = map(float, Path(path).read_text().split())
    return end - start


def read_jsonl(path):
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]


def usage_table(title, usage):
    rows = [f"| {title} stage | calls | failed | retries | prompt + completion tokens | invalid answers | repaired | error recorded |",
            "|---|---|---|---|---|---|---|---|"]
    for stage, u in usage.items():
        rows.append(f"| {stage} | {u['calls']} | {u['failed']} | {u['retries']} | {u['prompt']:,} + {u['completion']:,} | "
                    f"{u['invalid']} | {u['repaired']} | {u['unrepaired']} |")
    return "\n".join(rows)


def claims_summary(work, ideas):
    records = read_jsonl(work / "claims.jsonl")
    ids = [r["id"] for r in records]
    want = [i["id"] for i in ideas]
    errors = [r for r in records if r.get("error")]
    judged = [r for r in records if not r.get("error")]
    failed_grades = sum(r.get("failed_grades", 0) for r in judged)
    graded = sum(1 for r in judged for c in r["claims"] for cand in c["candidates"] if cand.get("level") is not None)
    judge_fallbacks = [r for r in judged if r["verdict"].get("error")]
    verdicts = {}
    for r in judged:
        verdicts[r["verdict"]["decision"]] = verdicts.get(r["verdict"]["decision"], 0) + 1
    err = (work / "claims.err").read_text()
    pool = re.search(r"pool: ([\d,]+) papers?, ([\d,]+) claims?", err)
    pool_failed = re.search(r"claim extraction failed for ([\d,]+) pool papers?", err)
    lines = [
        f"- records written: {len(records)} of {len(want)} ideas; every idea accounted for: "
        f"{'yes' if sorted(ids) == sorted(want) else 'NO (missing ' + ', '.join(sorted(set(want) - set(ids))) + ')'}",
        f"- judged: {len(judged)} ({', '.join(f'{k} {v}' for k, v in sorted(verdicts.items()))}); error records: {len(errors)}"
        + "".join(f"\n  - {r['id']}: {r['error'][:160]}" for r in errors),
        f"- verdicts by the LLM judge: {len(judged) - len(judge_fallbacks)}; by the rule after the judge failed: {len(judge_fallbacks)}",
        f"- candidates graded: {graded}; grades failed (recorded on the candidate, left out of a(c)): {failed_grades}",
        f"- pool: {pool.group(1) if pool else '?'} papers, {pool.group(2) if pool else '?'} claims; "
        f"pool papers whose extraction failed: {pool_failed.group(1) if pool_failed else 0}",
        f"- time: {seconds(work / 'claims.time'):.0f} s",
    ]
    return "\n".join(lines), usage_lines(work / "claims.err")


def retrieve_summary(work, queries):
    rows = read_jsonl(work / "run.jsonl")
    want = [q["id"] for q in queries]
    got = [r["query"] for r in rows]
    errors = [r for r in rows if r.get("rewrite_errors")]
    n_expand = sum(len(r["rewrites"].get("expand", [])) for r in rows)
    n_hyde = sum(len(r["rewrites"].get("hyde", [])) for r in rows)
    lines = [
        f"- records written: {len(rows)} of {len(want)} questions; every question accounted for: "
        f"{'yes' if sorted(got) == sorted(want) else 'NO'}",
        f"- rewrites used: {n_expand} expansions, {n_hyde} hypothetical abstracts; questions with a failed rewriting "
        f"(ranked by their own text): {len(errors)}"
        + "".join(f"\n  - {r['query']}: {json.dumps(r['rewrite_errors'])[:160]}" for r in errors),
        f"- time: {seconds(work / 'retrieve.time'):.0f} s",
    ]
    return "\n".join(lines), usage_lines(work / "retrieve.err")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--ideas", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--threads", default="2")
    a = ap.parse_args()
    work = Path(a.work)
    claims_text, claims_usage = claims_summary(work, read_jsonl(a.ideas))
    retrieve_text, retrieve_usage = retrieve_summary(work, read_jsonl(a.queries))
    model = next(iter(claims_usage.values()), {}).get("model", "?")
    print(f"Model `{model}` (llama-cpp-python server, {a.threads} threads, temperature 0, JSON-object response format)\n")
    print("`novelty claims` (per-idea pools, LLM extraction, grading and judge):\n")
    print(claims_text + "\n")
    print(usage_table("claims", claims_usage) + "\n")
    print("`novelty retrieve --expand --hyde`:\n")
    print(retrieve_text + "\n")
    print(usage_table("retrieve", retrieve_usage) + "\n")
    print("Retrieval quality (novelty eval retrieval):\n\n```\n" + (work / "eval.txt").read_text().strip() + "\n```")


if __name__ == "__main__":
    main()
