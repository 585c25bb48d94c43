#!/usr/bin/env bash
# Checks a cu13 wheel (docs/python.md, "CUDA wheel"): its name, the machine code of its module and
# CLI (SASS for sm_80, 86, 89, 90, 100 and 120 and compute_120 PTX, when cuobjdump is found), and,
# in a fresh virtual environment with the wheel and its dependencies from PyPI: `import novelty`,
# a CPU-device search identical to the CPU build's (build/cpu), and, without a GPU, device="cuda"
# refused with a NoveltyError (with a GPU: a CUDA search equal to the CPU's up to float16 storage).
#   bench/check_cuda_wheel.sh WHEEL      (CUOBJDUMP=path to use a given cuobjdump; without one on
#   PATH or in /usr/local/cuda, the script fetches PyPI's nvidia-cuda-cuobjdump 13 into its work folder)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wheel="$(realpath "$1")"
work="${NOVELTY_BENCH_WORK:-/tmp/novelty-cuda-wheel-check}"
rm -rf "$work" && mkdir -p "$work"
case "$(basename "$wheel")" in
  novelty-*+cu13-*.whl) echo "name: $(basename "$wheel") (cu13)" ;;
  *) echo "FAIL: $(basename "$wheel") is not named +cu13" >&2; exit 1 ;;
esac

cuobjdump="${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}"
if [ ! -x "$cuobjdump" ] && [ -z "${CUOBJDUMP:-}" ]; then
  # Some CUDA 13 toolkits ship without cuobjdump; NVIDIA publishes it on PyPI.
  python3 -m venv "$work/cuobjdump" &&
    "$work/cuobjdump/bin/pip" install -q --disable-pip-version-check "nvidia-cuda-cuobjdump>=13,<14" &&
    cuobjdump="$(find "$work/cuobjdump" -path '*/bin/cuobjdump' -type f | head -1)" ||
    echo "note: could not fetch nvidia-cuda-cuobjdump from PyPI"
fi
(cd "$work" && python3 -m zipfile -e "$wheel" unpacked)
if [ -x "$cuobjdump" ]; then
  for binary in "$work"/unpacked/novelty/_core.*.so "$work"/unpacked/novelty-*.data/scripts/novelty; do
    sass="$("$cuobjdump" --list-elf "$binary" | sed -E 's/.*\.(sm_[0-9a-z]+)\.cubin$/\1/' | sort -u | paste -sd' ')"
    ptx="$("$cuobjdump" --list-ptx "$binary" | sed -E 's/.*\.(sm_[0-9a-z]+)\.ptx$/\1/' | sort -u | paste -sd' ')"
    echo "$(basename "$binary"): SASS $sass; PTX $ptx"
    [ "$sass" = "sm_100 sm_120 sm_80 sm_86 sm_89 sm_90" ] && [ "$ptx" = "sm_120" ] ||
      { echo "FAIL: $(basename "$binary") lacks an architecture" >&2; exit 1; }
  done
else
  echo "note: no cuobjdump ($cuobjdump); architectures not checked"
fi

"$here/build/cpu/novelty" corpus import -q --format paperlists openalex --field ml biomed \
    --in "$here/data/demo/ml_papers_demo.jsonl.gz" "$here/data/demo/biomed_demo.jsonl.gz" --out "$work/corpus" >/dev/null
"$here/build/cpu/novelty" corpus add-vectors -q "$work/corpus" --vectors "$here/data/demo/vectors_minilm_f16.npy" \
    --ids "$here/data/demo/vector_ids.txt" --embedder all-MiniLM-L6-v2 --pooling mean >/dev/null

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
# The search both builds run: 64 corpus rows as queries, k 10, a cutoff.
search='
import sys, numpy as np, novelty
corpus = novelty.Corpus.open(sys.argv[1])
queries = np.asarray(corpus.vectors()[:64], dtype=np.float32)
r = novelty.Index(corpus, device=sys.argv[2]).search(queries, k=10, cutoffs="2021")
np.save(sys.argv[3], np.concatenate([r.rows.astype(np.float64), r.similarities.astype(np.float64)], axis=1))
print(novelty.__file__, "cuda_compiled:", novelty.cuda_compiled, "device:", sys.argv[2])
'
(cd "$work" && "$work/venv/bin/python" -c "$search" "$work/corpus" cpu "$work/wheel_cpu.npy")
PYTHONPATH="$here/build/cpu/python" "$here/.venv/bin/python" -c "$search" "$work/corpus" cpu "$work/build_cpu.npy"
"$here/.venv/bin/python" -c "
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert np.array_equal(a, b), 'the cu13 wheel on the CPU differs from the CPU build'
print('CPU-device search: identical to the CPU build')" "$work/wheel_cpu.npy" "$work/build_cpu.npy"

(cd "$work" && "$work/venv/bin/python" - "$work/corpus" "$work/wheel_cpu.npy" <<'EOF'
import sys, numpy as np, novelty
from novelty import _core
assert novelty.cuda_compiled, "the module has no CUDA backend"
if _core.auto_device() != "cuda":
    try:
        novelty.Index(sys.argv[1], device="cuda")
    except novelty.NoveltyError as e:
        print(f"no GPU: device='cuda' raises {type(e).__name__}: {e}")
    else:
        sys.exit("FAIL: device='cuda' worked without a GPU")
    print("device='auto' is", novelty.Index(sys.argv[1]).device)
else:
    corpus = novelty.Corpus.open(sys.argv[1])
    queries = np.asarray(corpus.vectors()[:64], dtype=np.float32)
    r = novelty.Index(corpus, device="cuda").search(queries, k=10, cutoffs="2021")
    cpu = np.load(sys.argv[2])
    assert np.allclose(r.similarities, cpu[:, 10:], atol=2e-3), "CUDA similarities differ from the CPU's"
    print("GPU: CUDA search agrees with the CPU's (float16 storage, atol 2e-3)")
EOF
)
echo "OK"
