#!/usr/bin/env bash
# Plants, one at a time, the faults the emulated CUDA device must catch (docs/cuda.md, issue of
# the emulated device), rebuilds the CPU-only configuration, runs the emulated GPU tests and the
# conformance suite's emu-* cases, and reports which tests failed for each fault. A fault that no
# test catches makes the script exit 1. Each planted file is restored from git afterwards (and on
# any exit); the script refuses to run when a file it plants in has uncommitted changes.
# Usage: [NOVELTY_MUTATIONS=substring] bench/emulator_mutations.sh [build dir, default build/cpu]
# (about 2 minutes a fault on 2 cores)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
build="${1:-build/cpu}"
py="$here/.venv/bin/python"; [ -x "$py" ] || py=python3

# name | file | text to replace | replacement
mutations=(
  "scope upload offset|engine/src/search/cuda/tiled_search.cpp|mask.row_limit = w.limits.as<std::int64_t>() + job.q0;|mask.row_limit = w.limits.as<std::int64_t>();"
  "self mask off by one row|engine/src/search/cuda/tiled_search.cpp|        mask.self_row0 = self0;|        mask.self_row0 = self0 + 1;"
  "filter applied to the wrong query|engine/src/search/cuda/tiled_search.cpp|        index[i] = static_cast<std::int32_t>(at - distinct.begin());|        index[(i + 1) % nb] = static_cast<std::int32_t>(at - distinct.begin());"
  "tile boundary dropping the last row|engine/src/search/cuda/tiled_search.cpp|            job.nc = std::min(ct_, job.c_first + c_rows - job.c0);|            job.nc = std::min(ct_, job.c_first + c_rows - job.c0 - 1);"
  "streamed merge losing a tie (device order kept, ties unsorted)|engine/src/search/cuda/tiled_search.cpp|            result.count[first + i] = best_of(vals + i * width, idx + i * width, k, k,|            result.count[first + i] = keep_device_order(vals + i * width, idx + i * width, k, k,"
  "encoder attention mask ignored (warp kernel)|engine/src/encoder/cuda/cuda_encoder.cpp|                start[t] = offsets[s];|                start[t] = 0;"
  "encoder attention mask ignored (tiled kernel)|engine/src/encoder/cuda/cuda_encoder.cpp|                tiles[n_tiles_] = offsets[s];|                tiles[n_tiles_] = 0;"
)
# The device order kept: what a merge that trusts select_k's order would write.
helper='std::size_t keep_device_order(const float* v, const std::int64_t* ix, std::size_t n, std::size_t k, std::int64_t* rows, float* sims) { std::size_t c = 0; for (std::size_t j = 0; j < n \&\& j < k; ++j) if (ix[j] >= 0) { rows[c] = ix[j]; sims[c] = v[j]; ++c; } for (std::size_t j = c; j < k; ++j) { rows[j] = -1; sims[j] = -INFINITY; } return c; }'

restore() { git checkout -- engine/src/search/cuda/tiled_search.cpp engine/src/encoder/cuda/cuda_encoder.cpp; }
for f in engine/src/search/cuda/tiled_search.cpp engine/src/encoder/cuda/cuda_encoder.cpp; do
  git diff --quiet -- "$f" || { echo "emulator_mutations: $f has uncommitted changes; commit or stash them first" >&2; exit 2; }
done
trap restore EXIT

uncaught=0
only="${NOVELTY_MUTATIONS:-}"  # a substring of the names to plant only those
for m in "${mutations[@]}"; do
  IFS='|' read -r name file from to <<< "$m"
  [[ -z "$only" || "$name" == *"$only"* ]] || continue
  filter='CudaBackend.*:CudaDensityStore.*:Backends/SearchConformance.*emu*'
  # The tiny fixtures' attention barely moves their vectors: the encoder's faults need MiniLM.
  [[ "$file" == *encoder* ]] && filter='CudaEncoder.*'
  FROM="$from" TO="$to" FILE="$file" "$py" - <<'PY'
import os, sys
path, old, new = os.environ["FILE"], os.environ["FROM"], os.environ["TO"]
text = open(path).read()
if text.count(old) != 1: sys.exit(f"emulator_mutations: the text to replace is not found once in {path}: {old}")
open(path, "w").write(text.replace(old, new))
PY
  if [[ "$name" == streamed* ]]; then
    sed -i "s|^namespace {\$|namespace {\n$helper|" engine/src/search/cuda/tiled_search.cpp
  fi
  NOVELTY_BUILD_TARGETS="novelty_gpu_tests novelty_tests" scripts/build.sh cpu > /tmp/emulator_mutations_build.log 2>&1 ||
    { echo "emulator_mutations: '$name' does not build:"; tail -20 /tmp/emulator_mutations_build.log; restore; uncaught=1; continue; }
  failed=$( { NOVELTY_DEVICE=cuda-emulated "$build/tests/novelty_gpu_tests" --gtest_brief=1 \
                --gtest_filter="$filter" 2>&1 || true; } |
            sed -n 's/^\[  FAILED  \] \([^ ,]*\).*/\1/p' | sort -u | tr '\n' ' ')
  if [ -n "$failed" ]; then echo "CAUGHT   $name: $failed"; else echo "UNCAUGHT $name"; uncaught=1; fi
  restore
done
NOVELTY_BUILD_TARGETS="novelty_gpu_tests novelty_tests" scripts/build.sh cpu > /dev/null 2>&1 || true
exit "$uncaught"
