#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ (clang's libFuzzer with AddressSanitizer and
# UndefinedBehaviorSanitizer) in build/fuzz and runs each for SECONDS from the committed seeds
# (fuzz/seeds/<name>/; what the fuzzer finds on the way goes to build/fuzz/corpus/, never into
# the seeds). Exits non-zero when a target finds a crash, a sanitizer report, a hang (an input
# taking over 10 s) or a leak; the input is kept in build/fuzz/findings/<target>/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default: 30 s each for import_fuzz pubmed_fuzz npy_fuzz
#        request_fuzz). scripts/test.sh runs the short form; bench/run_fuzz.sh the long one.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(import_fuzz pubmed_fuzz npy_fuzz request_fuzz)
clangxx="$(command -v clang++ || true)"
if [ -z "$clangxx" ]; then
  echo "fuzz: clang++ not found; scripts/setup.sh installs it (Debian clang, libclang-rt-14-dev)" >&2
  exit 1
fi
cmake_bin="$here/.venv/bin/cmake"
[ -x "$cmake_bin" ] || cmake_bin="$(command -v cmake)"
build="$here/build/fuzz"
if [ "${NOVELTY_FUZZ_NO_BUILD:-0}" != 1 ]; then  # set by bench/run_fuzz.sh --parallel after building once
  "$cmake_bin" -S "$here/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$clangxx" >/dev/null
  "$cmake_bin" --build "$build" -j "${NOVELTY_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}"
fi

status=0
for target in "${targets[@]}"; do
  name="${target%_fuzz}"
  work="$build/corpus/$name"
  findings="$build/findings/$target"
  log="$build/$target.log"
  mkdir -p "$work" "$findings"
  echo "== fuzz: $target for ${seconds} s" >&2
  if "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="$findings/" "$work" "$here/fuzz/seeds/$name" >"$log" 2>&1; then
    done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)"
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
    echo "fuzz: $target: no finding; ${runs:-?} inputs, ${rate:-?}/s; ${done_line:-no summary}" >&2
  else
    echo "fuzz: $target FOUND A PROBLEM (input in $findings/); the end of $log:" >&2
    tail -n 60 "$log" >&2
    status=1
  fi
done
exit "$status"
