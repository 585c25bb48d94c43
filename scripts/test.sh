#!/usr/bin/env bash
# Sets up the machine, builds the CPU-only and the CUDA configurations, and runs every test.
# GPU tests build in the CUDA configuration and skip when no device is present.
# Without nvcc the CUDA build is skipped with a notice, unless NOVELTY_REQUIRE_CUDA=1.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
scripts/setup.sh
jobs="$(nproc)"

echo "== function length" >&2
scripts/check_function_length.sh

echo "== CPU-only build" >&2
scripts/build.sh cpu
configs=(cpu)

nvcc_path="$(command -v nvcc || true)"
[ -n "$nvcc_path" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc_path=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc_path" ]; then
  echo "== CUDA build ($nvcc_path)" >&2
  scripts/build.sh cuda
  configs+=(cuda)
elif [ "${NOVELTY_REQUIRE_CUDA:-0}" = 1 ]; then
  echo "test: NOVELTY_REQUIRE_CUDA=1 but nvcc was not found" >&2
  exit 1
else
  echo "test: nvcc not found: skipping the CUDA build (the CPU build is the reference)" >&2
fi

ctest_bin="$here/.venv/bin/ctest"
[ -x "$ctest_bin" ] || ctest_bin="$(command -v ctest)"
for config in "${configs[@]}"; do
  echo "== tests: $config build" >&2
  "$ctest_bin" --test-dir "build/$config" --output-on-failure -j "$jobs"
done

# A short run of each fuzz target (fuzz/: the importers, the .npy reader, the request parser);
# bench/run_fuzz.sh runs them for 10 minutes each.
echo "== fuzz: ${NOVELTY_FUZZ_SECONDS:-30} s per target" >&2
scripts/fuzz.sh "${NOVELTY_FUZZ_SECONDS:-30}"
