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

# The compiler cache, when installed: the Python wheel's build (below) reuses the CPU build's objects.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$here}"
fi

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

# The Python package (python/, docs/python.md): its pytest suite imports the module the CPU build
# made (build/cpu/python) and compares it with that build's CLI; it also builds the wheel with pip
# (ccache serves the CPU build's objects) and installs it into a fresh virtual environment, unless
# NOVELTY_TEST_WHEEL=0.
echo "== Python package" >&2
NOVELTY_BUILD="$here/build/cpu" NOVELTY_TEST_WHEEL="${NOVELTY_TEST_WHEEL:-1}" \
  "$here/.venv/bin/python" -m pytest -q -p no:cacheprovider python/tests

# A short run of each fuzz target (fuzz/: the importers, the PubMed XML reader, the .npy reader,
# the request parser);
# bench/run_fuzz.sh runs them for 10 minutes each.
echo "== fuzz: ${NOVELTY_FUZZ_SECONDS:-30} s per target" >&2
scripts/fuzz.sh "${NOVELTY_FUZZ_SECONDS:-30}"
