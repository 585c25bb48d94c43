#!/usr/bin/env bash
# Sets up the machine, builds the engine, and runs the main job on the bundled demo data:
# imports data/demo into build/demo-corpus and prints what the corpus holds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
scripts/setup.sh
scripts/build.sh auto
novelty="build/auto/novelty"
corpus="build/demo-corpus"
"$novelty" corpus import --overwrite \
  --format paperlists openalex --field ml biomed \
  --in data/demo/ml_papers_demo.jsonl.gz data/demo/biomed_demo.jsonl.gz \
  --out "$corpus"
"$novelty" corpus info "$corpus"
