#!/usr/bin/env python3
"""The development set's AUROC at each precision of the CPU encoder against float32's.

Reads WORK/P/auroc.json (`novelty eval auroc --json`) for each precision P, prints a table of the
AUROC of every method over all ideas and per field with the difference to f32's, appends one JSON
line to --results, and exits 1 when a precision's RND AUROC (any group) differs from f32's by more
than --tolerance (0.003, docs/encoder.md's bar). Standard library only.
Usage: precision_auroc.py --work DIR --precisions f32,bf16,int8 [--results FILE] [--tolerance 0.003]
"""
import argparse
import datetime
import json
import os
import sys


def aurocs(path):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    return {group: {method: r["value"] for method, r in methods.items()} for group, methods in report["auroc"].items()}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", required=True)
    p.add_argument("--precisions", default="f32,bf16,int8")
    p.add_argument("--results", default=None)
    p.add_argument("--tolerance", type=float, default=0.003)
    args = p.parse_args()
    precisions = args.precisions.split(",")
    if precisions[0] != "f32":
        sys.exit("precision_auroc.py: the first precision must be f32, the reference")
    table = {precision: aurocs(os.path.join(args.work, precision, "auroc.json")) for precision in precisions}
    reference = table["f32"]
    failures = []
    print("| precision | group | " + " | ".join(sorted(reference["all"])) + " | RND - f32's |")
    print("|---" * (len(reference["all"]) + 3) + "|")
    for precision, groups in table.items():
        for group, methods in groups.items():
            want, got = reference[group].get("rnd"), methods.get("rnd")
            delta = None if want is None or got is None else got - want
            if delta is not None and abs(delta) > args.tolerance:
                failures.append(f"{precision} {group}: RND AUROC {got:.4f} against f32's {want:.4f}")
            cells = ["-" if methods.get(m) is None else f"{methods[m]:.4f}" for m in sorted(reference["all"])]
            print(f"| {precision} | {group} | " + " | ".join(cells) + f" | {'-' if delta is None else f'{delta:+.4f}'} |")
    record = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "bench": "devset_precision", "tolerance": args.tolerance, "auroc": table,
              "within_tolerance": not failures, "failures": failures}
    if args.results:
        with open(args.results, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    for failure in failures:
        print("off the bar: " + failure, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
