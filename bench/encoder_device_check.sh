#!/usr/bin/env bash
# The CUDA encoder's part of bench/device_check.sh run (sourced by it; runs on the GPU machine from
# the repository root, with the unpacked bundle in .device/bin). Functions:
#
#   encoder_model         makes a model of all-MiniLM-L6-v2's shape and vocabulary with random weights
#                         (bench/make_random_bert.py; the real weights cannot travel in the bundle) and
#                         prints its directory
#   encoder_bench MODEL   texts/s of the CUDA encoder and of the PyTorch float16 peer
#                         (bench/encoder_gpu_vs_torch.py) on ENCODER_TEXTS texts (default 10,000: the
#                         demo abstracts, repeated), and the cosine between their vectors
#   encoder_main_job MODEL   `novelty score` of MAIN_IDEAS text ideas (default 50,000) against a
#                         MAIN_ROWS-row corpus of random unit vectors (default 2,600,000) of the
#                         encoder's dimension: import + add-vectors + index (not timed as the job),
#                         then the job end to end, and its phases measured apart: tokenise (one
#                         thread) and embed (encoder_bench), search + densities + output (score
#                         with the ideas' vectors given)
# Each step has a time limit; each prints JSON lines that device_check.sh gathers into results.jsonl.

encoder_model() {
  local model
  model="$(mktemp -d)/minilm-random"
  timeout 60 python3 bench/make_random_bert.py .device/bin/minilm-shape "$model" >&2 || return 1
  echo "$model"
}

# TEXTS_JSONL N: N records cycled from the demo abstracts, with unique ids.
encoder_texts() {
  python3 - "$1" "$2" <<'PY'
import gzip, json, sys
out, n = sys.argv[1], int(sys.argv[2])
rows = []
for path in ("data/demo/ml_papers_demo.jsonl.gz", "data/demo/biomed_demo.jsonl.gz"):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("title") and (r.get("abstract") or r.get("text")):
                rows.append((r["title"], r.get("abstract") or r.get("text")))
with open(out, "w", encoding="utf-8") as f:
    for i in range(n):
        title, text = rows[i % len(rows)]
        f.write(json.dumps({"id": f"t{i}", "title": title, "text": text}) + "\n")
PY
}

encoder_bench() {
  local model="$1" n="${ENCODER_TEXTS:-10000}" tmp
  tmp=$(mktemp -d)
  encoder_texts "$tmp/texts.jsonl" "$n"
  timeout 120 .device/bin/encoder_bench "$model" "$tmp/texts.jsonl" "$tmp/ours.npy" 0 cuda "$tmp/ids.txt" |
    sed 's/^{/{"mode": "encoder", "peer": "ours", /'
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/encoder_gpu_vs_torch.py --model "$model" --ids "$tmp/ids.txt" \
    --ours "$tmp/ours.npy" --label "MiniLM-shape" --texts "$tmp/texts.jsonl"
  rm -rf "$tmp"
}

encoder_main_job() {
  local model="$1" ideas_n="${MAIN_IDEAS:-50000}" rows="${MAIN_ROWS:-2600000}" tmp
  tmp=$(mktemp -d)
  encoder_texts "$tmp/ideas.jsonl" "$ideas_n"
  local dim
  dim=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['hidden_size'])" "$model/config.json")
  python3 - "$tmp" "$rows" "$dim" <<'PY'
import json, sys
import numpy as np
tmp, n, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f"{tmp}/papers.jsonl", "w") as f:
    for i in range(n):
        f.write('{"id": "p%d", "title": "paper %d", "year": %d}\n' % (i, i, 1990 + i % 35))
with open(f"{tmp}/ids.txt", "w") as f:
    f.write("\n".join(f"p{i}" for i in range(n)) + "\n")
rng = np.random.default_rng(1)
v = np.lib.format.open_memmap(f"{tmp}/vectors.npy", mode="w+", dtype=np.float16, shape=(n, dim))
for s in range(0, n, 200000):
    x = rng.standard_normal((min(200000, n - s), dim), dtype=np.float32)
    v[s:s + len(x)] = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float16)
v.flush()
PY
  local nov=.device/bin/novelty t0
  t0=$(date +%s.%N)
  timeout 300 "$nov" corpus import -q --format jsonl --in "$tmp/papers.jsonl" --out "$tmp/corpus" >&2 &&
  timeout 100 "$nov" corpus add-vectors "$tmp/corpus" -q --vectors "$tmp/vectors.npy" --ids "$tmp/ids.txt" \
    --embedder "$(basename "$model")" --pooling mean >&2 &&
  timeout 200 "$nov" index "$tmp/corpus" -q --device cuda >&2 || { echo "encoder_main_job: preparing the corpus failed" >&2; rm -rf "$tmp"; return 1; }
  local prep
  prep=$(python3 -c "import time,sys; print(round(time.time() - float(sys.argv[1]), 2))" "$t0")
  local phases
  phases=$(timeout 120 .device/bin/encoder_bench "$model" "$tmp/ideas.jsonl" "$tmp/ideas.npy" 0 cuda)
  t0=$(date +%s.%N)
  timeout 120 "$nov" score --corpus "$tmp/corpus" --ideas "$tmp/ideas.jsonl" --vectors "$tmp/ideas.npy" --device cuda -q \
    --out "$tmp/scores_vectors.jsonl" >&2
  local with_vectors
  with_vectors=$(python3 -c "import time,sys; print(round(time.time() - float(sys.argv[1]), 3))" "$t0")
  t0=$(date +%s.%N)
  timeout 120 "$nov" score --corpus "$tmp/corpus" --ideas "$tmp/ideas.jsonl" --embedder "$model" --device cuda -q \
    --out "$tmp/scores_text.jsonl" >&2
  local rc=$? end_to_end
  end_to_end=$(python3 -c "import time,sys; print(round(time.time() - float(sys.argv[1]), 3))" "$t0")
  python3 - "$phases" "$with_vectors" "$end_to_end" "$prep" "$rows" "$ideas_n" "$dim" "$rc" "$tmp" <<'PY'
import json, sys
p = json.loads(sys.argv[1])
same = None
try:
    a = [json.loads(l) for l in open(sys.argv[9] + "/scores_vectors.jsonl")]
    b = [json.loads(l) for l in open(sys.argv[9] + "/scores_text.jsonl")]
    same = len(a) == len(b)
except OSError:
    pass
print(json.dumps({"mode": "main_job", "ideas": int(sys.argv[6]), "rows": int(sys.argv[5]), "dim": int(sys.argv[7]),
                  "rc": int(sys.argv[8]), "end_to_end_seconds": float(sys.argv[3]),
                  "tokenize_seconds_one_thread": p["tokenize_seconds_one_thread"], "embed_seconds": p["seconds"],
                  "encoder_load_seconds": p["load_seconds"],
                  "search_densities_output_seconds": float(sys.argv[2]), "corpus_prep_seconds": float(sys.argv[4]),
                  "outputs_same_length": same}))
PY
  rm -rf "$tmp"
}
