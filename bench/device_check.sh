#!/usr/bin/env bash
# The GPU check, in two halves (docs/benchmarks.md records what it measured):
#
#   bench/device_check.sh pack   on the build machine (nvcc, no GPU needed): builds the GPU
#                                tests, the CUDA benchmark and the CLI in build/cuda (sm_90 machine
#                                code plus compute_90 PTX, the default architectures) and
#                                packs them with the shared libraries they need that a GPU
#                                machine may lack into .device/ (git-ignored; under 60 MB).
#   bench/device_check.sh run    on the GPU machine, from the repository root: runs the GPU tests,
#                                the CUDA benchmarks (each similarity tile type in TILES on the
#                                same data, checked against the CPU on CHECK queries), the PyTorch
#                                peer (the machine's python3 with torch), the peers in PEERS
#                                (bench/cuda_search_peers.py: cuVS brute force, FAISS
#                                GpuIndexFlatIP, CuPy; one absent says "not available: why"),
#                                the CLI under mpirun when the machine has Open MPI
#                                (docs/scaling.md), writes logs and results.jsonl to $OUT (default
#                                .device/out), and prints a short table last.
#
# Sizes (override with the environment): SEARCH_QUERIES=50000, SEARCH_ROWS="1000000 2600000",
# DIM=1024, K=100, SELFJOIN_ROWS=1000000, SELFJOIN_Q=50, TILES=f32,f16, CHECK=64, PEERS=cuvs,faiss,cupy.
# QUICK=1 runs small sizes, for a smoke test.
# SWEEP="ALGO:OVERLAP:QT:CT,..." also times tuning variants of the search (cuda_search_bench sweep).
# SKIP_MAIN=1 runs only the tests and the sweep. SKIP_ENCODER=1 skips the text encoder's benchmarks
# (bench/encoder_device_check.sh: ENCODER_TEXTS=10000, MAIN_IDEAS=50000, MAIN_ROWS=2600000). SANITIZE=1 also runs the small GPU tests under
# compute-sanitizer's memcheck (bad device memory accesses; needs a machine where it works).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
mode="${1:-}"

if [[ "${QUICK:-0}" == 1 ]]; then
  SEARCH_QUERIES="${SEARCH_QUERIES:-2000}"; SEARCH_ROWS="${SEARCH_ROWS:-100000}"; SELFJOIN_ROWS="${SELFJOIN_ROWS:-50000}"
  ENCODER_TEXTS="${ENCODER_TEXTS:-1000}"; MAIN_IDEAS="${MAIN_IDEAS:-2000}"; MAIN_ROWS="${MAIN_ROWS:-100000}"
fi
SEARCH_QUERIES="${SEARCH_QUERIES:-50000}"
SEARCH_ROWS="${SEARCH_ROWS:-1000000 2600000}"
DIM="${DIM:-1024}"
K="${K:-100}"
SELFJOIN_ROWS="${SELFJOIN_ROWS:-1000000}"
SELFJOIN_Q="${SELFJOIN_Q:-50}"
TILES="${TILES:-f32,f16}"
CHECK="${CHECK:-64}"
PEERS="${PEERS:-cuvs,faiss,cupy}"

pack() {
  set -e
  local cmake=cmake
  [[ -x .venv/bin/cmake ]] && cmake=.venv/bin/cmake
  local build=build/cuda
  "$cmake" -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNOVELTY_CUDA=ON >/dev/null
  grep -q '^NOVELTY_CUDA_ARCHITECTURES:STRING=.*90' "$build/CMakeCache.txt" ||
    { echo "device_check: $build is not configured for sm_90" >&2; exit 1; }
  "$cmake" --build "$build" -j "${NOVELTY_BUILD_JOBS:-$(nproc)}" --target novelty_gpu_tests cuda_search_bench encoder_bench novelty
  rm -rf .device
  mkdir -p .device/bin .device/lib
  cp "$build/tests/novelty_gpu_tests" "$build/novelty" "$build/bench/cuda_search_bench" "$build/bench/encoder_bench" .device/bin/
  # all-MiniLM-L6-v2's shape and tokenizer without its weights (the GPU machine makes random ones).
  mkdir -p .device/bin/minilm-shape/1_Pooling
  for f in config.json vocab.txt tokenizer_config.json special_tokens_map.json sentence_bert_config.json modules.json; do
    cp -L "models/all-MiniLM-L6-v2/$f" .device/bin/minilm-shape/
  done
  cp -L models/all-MiniLM-L6-v2/1_Pooling/config.json .device/bin/minilm-shape/1_Pooling/
  cp bench/cuda_search_vs_torch.py bench/cuda_search_peers.py bench/device_cli_compare.py .device/bin/
  # The demo ideas' vectors, so the GPU machine needs no encoder weights for the CLI check.
  "$build/novelty" embed -q --in data/ideas.jsonl --out .device/bin/ideas.npy
  strip .device/bin/novelty_gpu_tests .device/bin/novelty .device/bin/cuda_search_bench .device/bin/encoder_bench
  # Libraries outside the C/C++ runtime and the CUDA driver/toolkit (cuBLAS is the GPU machine's own).
  for exe in .device/bin/novelty_gpu_tests .device/bin/novelty .device/bin/cuda_search_bench .device/bin/encoder_bench; do
    ldd "$exe" | awk '/=> \//{print $3}'
  done | sort -u | grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcuda|libcublas[^/]*|libcudart[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" .device/lib/; done
  # Compressed, the bundle travels well under the limit (OpenBLAS alone is 36 MB unpacked).
  tar -C .device -cJf .device/bundle.tar.xz bin lib
  rm -rf .device/bin .device/lib
  du -sh .device
  local bytes
  bytes=$(du -sb .device | cut -f1)
  if (( bytes > 60 * 1024 * 1024 )); then echo "device_check: .device is over 60 MB" >&2; exit 1; fi
}

# Imports the demo corpus twice, indexes and scores the demo ideas on the GPU and on the CPU, and
# prints one JSON line comparing them (bench/device_cli_compare.py).
cli_check() {
  local out="$1" novelty=.device/bin/novelty tmp
  tmp=$(mktemp -d)
  for device in cuda cpu; do
    timeout 120 "$novelty" corpus import --overwrite -q --format paperlists openalex --field ml biomed \
      --in data/demo/ml_papers_demo.jsonl.gz data/demo/biomed_demo.jsonl.gz --out "$tmp/$device" >&2 &&
    timeout 60 "$novelty" corpus add-vectors "$tmp/$device" -q --vectors data/demo/vectors_minilm_f16.npy \
      --ids data/demo/vector_ids.txt --embedder all-MiniLM-L6-v2 --pooling mean >&2 &&
    timeout 120 "$novelty" index "$tmp/$device" -q --device "$device" >"$out/index_$device.txt" 2>&1 &&
    timeout 120 "$novelty" score --corpus "$tmp/$device" --ideas data/ideas.jsonl --vectors .device/bin/ideas.npy \
      --device "$device" -q --out "$out/score_$device.jsonl" >&2 &&
    timeout 120 "$novelty" search --corpus "$tmp/$device" --queries data/ideas.jsonl --vectors .device/bin/ideas.npy \
      --k 20 --device "$device" -q --out "$out/search_$device.jsonl" >&2 ||
      echo "device_check: the CLI check failed on --device $device" >&2
  done
  python3 .device/bin/device_cli_compare.py "$out"
  rm -rf "$tmp"
}

# The GPU path under MPI (docs/scaling.md): the demo corpus searched and indexed with --device
# cuda by one process, by `mpirun -np 1` and by `mpirun -np 2` (ranks take GPUs by local rank;
# with one GPU both use it); one JSON line says which outputs are byte-identical to one process.
mpi_check() {
  local out="$1" novelty=.device/bin/novelty tmp
  if ! command -v mpirun >/dev/null; then echo '{"mode": "mpi", "skipped": "no mpirun on this machine"}'; return; fi
  tmp=$(mktemp -d)
  timeout 120 "$novelty" corpus import --overwrite -q --format paperlists openalex --field ml biomed \
    --in data/demo/ml_papers_demo.jsonl.gz data/demo/biomed_demo.jsonl.gz --out "$tmp/c" >&2
  timeout 60 "$novelty" corpus add-vectors "$tmp/c" -q --vectors data/demo/vectors_minilm_f16.npy \
    --ids data/demo/vector_ids.txt --embedder all-MiniLM-L6-v2 --pooling mean >&2
  local line='{"mode": "mpi"' launch
  for ranks in 0 1 2; do
    launch=()
    (( ranks > 0 )) && launch=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np "$ranks")
    rm -rf "$tmp/c/cache"
    timeout 120 "${launch[@]}" "$novelty" index "$tmp/c" -q --device cuda >"$out/mpi_index_$ranks.txt" 2>&1
    cp "$tmp"/c/cache/selfjoin-*.bin "$tmp/join_$ranks.bin" 2>/dev/null
    timeout 120 "${launch[@]}" "$novelty" search --corpus "$tmp/c" --queries data/ideas.jsonl --vectors .device/bin/ideas.npy \
      --k 20 --device cuda -q --out "$tmp/search_$ranks.jsonl" >>"$out/mpi_index_$ranks.txt" 2>&1
    if (( ranks > 0 )); then
      cmp -s "$tmp/search_0.jsonl" "$tmp/search_$ranks.jsonl" && line+=", \"search_same_$ranks\": true" || line+=", \"search_same_$ranks\": false"
      cmp -s "$tmp/join_0.bin" "$tmp/join_$ranks.bin" && line+=", \"cache_same_$ranks\": true" || line+=", \"cache_same_$ranks\": false"
    fi
  done
  echo "$line}"
  rm -rf "$tmp"
}

run() {
  local out="${OUT:-$here/.device/out}"
  mkdir -p "$out"
  [[ -f .device/bundle.tar.xz ]] || { echo "device_check: run 'bench/device_check.sh pack' first" >&2; exit 2; }
  rm -rf .device/bin .device/lib
  tar -C .device -xJf .device/bundle.tar.xz
  local cublas_dir
  cublas_dir=$(dirname "$(find /usr/local /opt /usr/lib -name 'libcublas.so.13*' 2>/dev/null | head -1)" 2>/dev/null)
  export LD_LIBRARY_PATH="$here/.device/lib:${cublas_dir:-/usr/local/cuda/lib64}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  local results="$out/results.jsonl"
  : >"$results"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$out/gpu.txt"
  .device/bin/novelty info 2>&1 | tee -a "$out/gpu.txt"

  # A model of all-MiniLM-L6-v2's shape for the encoder's GPU tests and benchmarks.
  local encoder_dir=""
  encoder_dir=$(encoder_model) || echo "device_check: making the random MiniLM-shaped model failed" >&2
  export NOVELTY_TEST_SOURCE_DIR="$here" NOVELTY_TEST_MINILM_DIR="$encoder_dir"

  echo "== GPU tests"
  local t0=$SECONDS
  # On the card itself: NOVELTY_DEVICE unset (it would hand the tests to the emulated device),
  # and the conformance suite's emu-* cases left to CI (the twins are checked against the card
  # by tests/gpu/emulator_twin_test.cpp, which runs here).
  timeout 150 env -u NOVELTY_DEVICE .device/bin/novelty_gpu_tests --gtest_brief=1 --gtest_filter='-*/emu_*' \
    >"$out/gpu_tests.log" 2>&1
  local tests_rc=$?
  tail -5 "$out/gpu_tests.log"
  local passed failed
  passed=$(grep -c '^\[       OK \]' "$out/gpu_tests.log" || true)
  failed=$(grep -c '^\[  FAILED  \]' "$out/gpu_tests.log" || true)
  grep -E '^\[  PASSED  \]|^\[  FAILED  \]|tests? ran' "$out/gpu_tests.log" | head -20
  echo "{\"mode\": \"tests\", \"rc\": $tests_rc, \"seconds\": $((SECONDS - t0))}" >>"$results"
  if [[ "${SANITIZE:-0}" == 1 ]]; then
    echo "== GPU tests under compute-sanitizer (memcheck, small tests only)"
    t0=$SECONDS
    local small='CudaBackend.Float32MatchesCpuAcrossTileBoundaries:CudaBackend.CutoffsAndExclusions:CudaBackend.KAtOne*'
    small+=':CudaBackend.ExactTies*:CudaBackend.ThresholdFilterOverflowStaysExact:CudaBackend.ProfileCounts*'
    small+=':CudaBackend.CandidatesMatchCpu:NormalizeRowsCuda.MatchesCpuDim*'
    small+=':CudaBackend.HalfTilesOverflowStaysExact:CudaBackend.HalfTilesSelfJoinMatchesTheCpu'
    small+=':Backends/SearchConformance.NearTiesAtTheMarginOnAFloat16Corpus/cuda_f16_t16'
    timeout 240 compute-sanitizer --tool memcheck --error-exitcode 3 .device/bin/novelty_gpu_tests --gtest_brief=1 \
      --gtest_filter="$small" >"$out/sanitizer.log" 2>&1
    local sanitize_rc=$?
    tail -5 "$out/sanitizer.log"
    echo "{\"mode\": \"sanitizer\", \"rc\": $sanitize_rc, \"seconds\": $((SECONDS - t0))}" | tee -a "$results"
  fi

  echo "== the CLI on the demo corpus: index and score with --device cuda and cpu"
  cli_check "$out" | tee -a "$results"
  echo "== the sharded index under mpirun on the GPU"
  mpi_check "$out" | tee -a "$results"

  echo "== benchmarks"
  # Each step has a time limit, so that one hang cannot use up the machine's time.
  timeout 60 .device/bin/cuda_search_bench gemm-rate | tee -a "$results"
  [[ "${SKIP_MAIN:-0}" == 1 ]] && SEARCH_ROWS="" && SELFJOIN_ROWS=0
  for rows in $SEARCH_ROWS; do
    # --profile: one more call, on a fresh backend, that records its time per phase.
    # Each tile type on the same data, each with its profiled call, and the CPU check.
    timeout 240 .device/bin/cuda_search_bench search --rows "$rows" --queries "$SEARCH_QUERIES" --dim "$DIM" --k "$K" \
      --tiles "$TILES" --check "$CHECK" --profile "$out/profile_$rows.jsonl" | tee -a "$results"
    PYTHONUNBUFFERED=1 timeout 120 python3 .device/bin/cuda_search_vs_torch.py search --rows "$rows" --queries "$SEARCH_QUERIES" \
      --dim "$DIM" --k "$K" | tee -a "$results"
    [[ -n "$PEERS" ]] && PYTHONUNBUFFERED=1 timeout 180 python3 .device/bin/cuda_search_peers.py search --rows "$rows" \
      --queries "$SEARCH_QUERIES" --dim "$DIM" --k "$K" --peers "$PEERS" | tee -a "$results"
  done
  if (( SELFJOIN_ROWS > 0 )); then
    timeout 150 .device/bin/cuda_search_bench selfjoin --rows "$SELFJOIN_ROWS" --dim "$DIM" --q "$SELFJOIN_Q" --tiles "$TILES" |
      tee -a "$results"
    PYTHONUNBUFFERED=1 timeout 90 python3 .device/bin/cuda_search_vs_torch.py selfjoin --rows "$SELFJOIN_ROWS" --dim "$DIM" \
      --q "$SELFJOIN_Q" | tee -a "$results"
  fi

  if [[ "${SKIP_ENCODER:-0}" != 1 && -n "$encoder_dir" ]]; then
    echo "== text encoder: CUDA vs PyTorch float16, and the main job end to end"
    encoder_bench "$encoder_dir" | tee -a "$results"
    encoder_main_job "$encoder_dir" | tee -a "$results"
  fi

  if [[ -n "${SWEEP:-}" ]]; then
    # Tuning: RAFT select algorithm : GEMM/select overlap : query tile : corpus tile.
    timeout 240 .device/bin/cuda_search_bench sweep --rows "${SWEEP_ROWS:-1000000}" --queries "$SEARCH_QUERIES" \
      --dim "$DIM" --k "$K" --reps 2 --variants "$SWEEP" | tee -a "$results"
  fi

  echo
  echo "== summary (tests rc=$tests_rc)"
  python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rate = next((r["bf16_tflops"] for r in rows if r["mode"] == "gemm-rate"), None)
print(f"cuBLAS bf16 rate: {rate} TFLOP/s")
nan = float("nan")
def peer_s(name, r):
    """A peer's seconds for r's shape, scaled to r's query count (CuPy times fewer queries); nan when absent."""
    p = next((p for p in rows if p.get("peer") == name and p["mode"] == r["mode"] and p["rows"] == r["rows"]
              and p.get("available", True)), None)
    return p["seconds"] * r.get("queries", 1) / p.get("queries", r.get("queries", 1)) if p else nan
print(f"{'what':40} {'engine s':>9} {'torch s':>8} {'x torch':>8} {'cuVS s':>7} {'x cuVS':>7} {'FAISS s':>8} "
      f"{'x FAISS':>8} {'CuPy s':>7} {'floor s':>8} {'x floor':>8}")
for r in rows:
    if r["mode"] == "search" and "peer" not in r:
        floor = 2 * r["queries"] * r["rows"] * r["dim"] / (rate * 1e12) if rate else nan
        ts, cs, fs, ps = (peer_s(n, r) for n in ("torch", "cuvs", "faiss", "cupy"))
        e = r["seconds"]
        print(f"{'search %dk x %.1fM x %d k=%d %s' % (r['queries']//1000, r['rows']/1e6, r['dim'], r['k'], r.get('tile', 'f32')):40} "
              f"{e:9.3f} {ts:8.3f} {ts / e:7.2f}x {cs:7.3f} {cs / e:6.2f}x {fs:8.3f} {fs / e:7.2f}x {ps:7.3f} "
              f"{floor:8.3f} {e / floor:7.2f}x")
    if r["mode"] == "search" and r.get("available") is False:
        print(f"  peer {r['peer']} at {r['rows']/1e6:.1f}M rows: {r['reason']}")
    if r["mode"] == "search" and r.get("peer") in ("cuvs", "faiss") and r.get("available"):
        print(f"  peer {r['peer']} {r.get('version')} at {r['rows']/1e6:.1f}M rows: build {r['build_s']:.3f} s, "
              f"search {r['seconds']:.3f} s, mean top-1 {r['mean_top1']}")
    if r["mode"] == "check":
        print(f"  check {r['tile']} at {r['rows']/1e6:.1f}M rows against the CPU on {r['check_queries']} queries: "
              f"rows equal at {r['rows_equal_share']:.4%} of {r['apart_ranks']} separated ranks, "
              f"max |sim diff| {r['max_sim_diff']:.1e}")
    if r["mode"] == "cli":
        print(f"CLI on the demo corpus, cuda vs cpu: {r['ideas']} ideas, RND equal for {r['rnd_equal']}, "
              f"max |ND diff| {r['max_nd_diff']:.2e}, max |density diff| over papers {r['max_density_diff']:.2e}, "
              f"search top-20 overlap {r['search_overlap']:.4f}, provenance {r['backends']}")
    if r["mode"] == "profile" and r.get("phases"):
        dev, host = r["phases"]["device"], r["phases"]["host"]
        call = host["seconds"].get("call", float("nan"))
        print(f"  profile {r.get('tile', 'f32')} {r['queries']//1000}k x {r['rows']/1e6:.1f}M: {r['seconds']:.3f} s, of which "
              f"{r['seconds'] - call:.3f} s before the backend (checks, normalisation)")
        print("    host: " + ", ".join(f"{n} {s:.3f}" for n, s in host["seconds"].items()) +
              "; counts: " + ", ".join(f"{n} {c}" for n, c in host["counts"].items()))
        print("    device (summed spans, streams overlap): " +
              ", ".join(f"{n} {s:.3f} ({dev['spans'][n]})" for n, s in dev["seconds"].items()))
    if r["mode"] == "mpi":
        print("sharded index under mpirun on the GPU (byte-identical to one process): " +
              ", ".join(f"{n} {v}" for n, v in r.items() if n != "mode"))
    if r["mode"] == "sanitizer":
        print(f"compute-sanitizer memcheck of the small GPU tests: rc {r['rc']} in {r['seconds']} s "
              f"({'clean' if r['rc'] == 0 else 'see sanitizer.log'})")
    if r["mode"] == "encoder" and r.get("peer") in ("ours", "torch-best"):
        extra = f", min cosine to ours {r['min_cosine_to_ours']:.6f}, batch {r['batch']}" if r["peer"] == "torch-best" else ""
        print(f"encoder {r['peer']:10} {r['texts']} texts: {r['per_second']:.1f} texts/s ({r['seconds']:.3f} s{extra})")
    if r["mode"] == "main_job":
        print(f"main job {r['ideas']} ideas x {r['rows']/1e6:.1f}M x {r['dim']}: {r['end_to_end_seconds']:.2f} s end to end "
              f"(rc {r['rc']}); apart: tokenise {r['tokenize_seconds_one_thread']:.2f} s (1 thread), embed "
              f"{r['embed_seconds']:.2f} s, search+densities+output {r['search_densities_output_seconds']:.2f} s; "
              f"corpus preparation {r['corpus_prep_seconds']:.1f} s")
    if r["mode"] == "sweep":
        print(f"{'sweep ' + r['variant']:40} {r['seconds']:9.3f}  (min {r['min_s']:.3f}, max {r['max_s']:.3f})")
    if r["mode"] == "selfjoin" and "peer" not in r:
        t = next((p for p in rows if p.get("peer") == "torch" and p["mode"] == "selfjoin"), None)
        floor = 2 * r["rows"] * r["rows"] * r["dim"] / (rate * 1e12) if rate else float("nan")
        ts = t["seconds"] if t else float("nan")
        print(f"{'self-join %.1fM x %d q=%d %s' % (r['rows']/1e6, r['dim'], r['q'], r.get('tile', 'f32')):40} "
              f"{r['seconds']:9.3f} {ts:8.3f} {ts / r['seconds']:7.2f}x {'':7} {'':7} {'':8} {'':8} {'':7} "
              f"{floor:8.3f} {r['seconds'] / floor:7.2f}x  mean density {r['mean_density']}")
PY
}

# shellcheck source=bench/encoder_device_check.sh
source "$here/bench/encoder_device_check.sh"

case "$mode" in
  pack) pack ;;
  run) run ;;
  *) echo "usage: bench/device_check.sh pack|run" >&2; exit 2 ;;
esac
