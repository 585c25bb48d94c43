#!/usr/bin/env bash
# Configures and builds one configuration of the engine with CMake + Ninja.
# Usage: scripts/build.sh cpu|cuda|auto [extra cmake args...]
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
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNOVELTY_CUDA="$cuda" "$@" >/dev/null
cmake --build "$build" -j "$jobs"
