#!/usr/bin/env python3
"""Compares triage verdicts with the verdicts of checking every idea (standard library only).

  triage_eval.py --reference claims.jsonl --all triage_all.jsonl [--cascade triage.jsonl]
                 [--reference-calls N --cascade-calls M] [--sweep]

--reference: `novelty claims` on every idea (the verdict of checking each one).
--all: `novelty triage --select all` (every representative checked; gives each representative's
       RND, nearest paper and ClaimNov verdict), used to replay any gate and band exactly (--sweep).
--cascade: a real `novelty triage` run to report (its verdicts against the reference).
Prints Markdown rows: ideas, checked representatives, LLM calls, agreement.
"""
import argparse
import json


def read(path):
    with open(path) as f:
        return {r["id"]: r for r in map(json.loads, f)}


def decision(record):
    v = record.get("verdict")
    return v["decision"] if v else None


def agreement(decisions, reference):
    both = [i for i in reference if decision(reference[i]) is not None and decisions.get(i) is not None]
    same = sum(decisions[i] == decision(reference[i]) for i in both)
    return same, len(both)


def gate_value(record, gate):
    return record["scores"]["rnd"] if gate == "rnd" else record["scores"]["nearest"]["sim"]


def replay(all_run, gate, lo, hi, budget=None):
    """Decisions under a band, from a --select all run: the representative's ClaimNov verdict when
    its gate value is in [lo, hi] (the middle first, within the budget), else the gate's decision:
    RND passes at or above the middle, a nearest paper at or above the middle fails."""
    mid = (lo + hi) / 2
    reps = {r["id"]: r for r in all_run.values() if r["role"] == "representative" and r["scores"]}
    in_band = sorted((abs(gate_value(r, gate) - mid), r["line"], rid) for rid, r in reps.items()
                     if lo <= gate_value(r, gate) <= hi)
    if budget is not None:
        in_band = in_band[:budget]
    checked = {rid for _, _, rid in in_band}
    out = {}
    for rid, r in all_run.items():
        rep = reps.get(r["cluster"]["representative"])
        if rep is None:
            out[rid] = None
        elif rep["id"] in checked and rep["decided_by"] == "claimnov":
            out[rid] = rep["verdict"]["decision"]
        else:
            above = gate_value(rep, gate) >= mid
            out[rid] = ("pass" if above else "fail") if gate == "rnd" else ("fail" if above else "pass")
    return out, len(checked)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--all", required=True)
    ap.add_argument("--cascade")
    ap.add_argument("--reference-calls", type=int)
    ap.add_argument("--cascade-calls", type=int)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    reference = read(args.reference)
    all_run = read(args.all)
    n = len(reference)
    fails = sum(decision(r) == "fail" for r in reference.values())
    reps = sum(r["role"] == "representative" for r in all_run.values())
    print(f"{args.label}: {n} ideas, {reps} clusters, reference: {fails} fail / {n - fails} pass")
    if args.cascade:
        cascade = read(args.cascade)
        same, both = agreement({i: decision(r) for i, r in cascade.items()}, reference)
        checked = sum(r["role"] == "representative" and r["checked"] for r in cascade.values())
        calls = f"{args.cascade_calls} / {args.reference_calls}" if args.cascade_calls is not None else "-"
        print(f"| {args.label} | {n} | {checked} ({100 * checked / n:.1f}%) | {calls} | "
              f"{same}/{both} = {100 * same / max(both, 1):.1f}% |")
    if args.sweep:
        print("| gate | band | checked (share of ideas) | agreement |")
        print("|---|---|---|---|")
        bands = [("rnd", lo, hi) for lo in range(0, 101, 10) for hi in range(lo, 101, 10)]
        bands += [("nearest", lo / 100, hi / 100) for lo in range(50, 100, 2) for hi in range(lo, 100, 2)]
        for gate, lo, hi in bands:
            decisions, checked = replay(all_run, gate, lo, hi)
            same, both = agreement(decisions, reference)
            print(f"| {gate} | {lo:g},{hi:g} | {checked} ({100 * checked / n:.1f}%) | {100 * same / max(both, 1):.1f}% |")


if __name__ == "__main__":
    main()
