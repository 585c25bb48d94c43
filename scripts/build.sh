#!/usr/bin/env bash
# Configures and builds one configuration of the engine with CMake + Ninja.
# Usage: scripts/build.sh cpu|cuda|auto [extra cmake args...]
#   NOVELTY_BUILD_TARGETS="novelty ..." builds only those targets (default: everything, tests too)
#   cpu  -> build/cpu   (NOVELTY_CUDA=OFF)
#   cuda -> build/cuda  (NOVELTY_CUDA=ON; needs nvcc, no GPU)
#   auto -> build/auto  (CUDA when nvcc is found)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind="${1:-auto}"
shift || true
case "$kind" in
  cpu) cuda=OFF ;;
  cuda) cuda=ON ;;
  auto) cuda=AUTO ;;
  *) echo "usage: scripts/build.sh cpu|cuda|auto [cmake args...]" >&2; exit 2 ;;
esac
build="$here/build/$kind"
jobs="${NOVELTY_BUILD_JOBS:-$(nproc)}"
# The CMake that scripts/setup.sh installs in .venv (>= 4.0, which RAFT's package needs);
# the system one otherwise (CPU-only builds work with 3.25).
cmake_bin="$here/.venv/bin/cmake"
[ -x "$cmake_bin" ] || cmake_bin="$(command -v cmake)"
# A build directory configured by another CMake cannot be reused: start it afresh.
cache_version() {
  sed -n 's/^CMAKE_CACHE_\(MAJOR\|MINOR\|PATCH\)_VERSION:INTERNAL=//p' "$1" | paste -sd.
}
if [ -f "$build/CMakeCache.txt" ] &&
   [ "$(cache_version "$build/CMakeCache.txt")" != "$("$cmake_bin" --version | awk 'NR==1{print $3}')" ]; then
  echo "build: $build was configured by another CMake; reconfiguring from scratch" >&2
  rm -rf "$build"
fi
"$cmake_bin" -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNOVELTY_CUDA="$cuda" "$@" >/dev/null
targets=()
for target in ${NOVELTY_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
"$cmake_bin" --build "$build" -j "$jobs" "${targets[@]}"
