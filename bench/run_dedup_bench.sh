#!/usr/bin/env bash
# novelty dedup on generated ideas (default 100,000 x 384, 30% near-copies in groups of 2-8, some
# chained): the in-process time of dedup_ideas beside a plain self-join with k = 1 (the same
# matrix products: the floor), then the whole command from a .npy to the written clusters.
# Usage: bench/run_dedup_bench.sh [N] [DIM]. Results go to docs/benchmarks.md by hand.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-100000}"
dim="${2:-384}"
"$here/scripts/build.sh" cpu >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "in-process (dedup_ideas, then a self-join with k = 1):"
"$here/build/cpu/bench/dedup_bench" --n "$n" --dim "$dim" --write "$work/ideas.npy"
echo "end to end (novelty dedup --device cpu, .npy in, JSON Lines out):"
start=$(date +%s.%N)
/usr/bin/time -f "peak RSS %M KB" "$here/build/cpu/novelty" dedup -q --device cpu --ideas "$work/ideas.npy" \
  --out "$work/clusters.jsonl"
end=$(date +%s.%N)
echo "wall $(echo "$end - $start" | bc) s, $(wc -l < "$work/clusters.jsonl") clusters"
