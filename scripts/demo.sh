#!/usr/bin/env bash
# Sets up the machine, builds the `novelty` command (only it: not the test suite, which is most
# of a full build's time), and runs the main job on the bundled demo data:
# imports data/demo into build/demo-corpus, attaches the committed all-MiniLM-L6-v2 vectors (so
# nothing needs re-embedding), embeds the example ideas in data/ideas.jsonl with the built-in
# encoder and prints each idea's novelty scores (RND, ND, HD) and nearest demo paper.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
scripts/setup.sh
NOVELTY_BUILD_TARGETS=novelty scripts/build.sh auto
novelty="build/auto/novelty"
corpus="build/demo-corpus"
"$novelty" corpus import --overwrite -q \
  --format paperlists openalex --field ml biomed \
  --in data/demo/ml_papers_demo.jsonl.gz data/demo/biomed_demo.jsonl.gz \
  --out "$corpus"
"$novelty" corpus add-vectors "$corpus" -q --vectors data/demo/vectors_minilm_f16.npy --ids data/demo/vector_ids.txt \
  --embedder all-MiniLM-L6-v2 --pooling mean
"$novelty" corpus info "$corpus"
echo
"$novelty" score --corpus "$corpus" --ideas data/ideas.jsonl
echo
echo "The web page (docs/ui.md): start the server, then open the URL in a browser (Ctrl-C stops it):"
echo "  $novelty serve --corpus $corpus"
echo "  http://127.0.0.1:8080/ui/"
