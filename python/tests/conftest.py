"""Fixtures of the Python suite: the package from the build tree (NOVELTY_BUILD, default
build/cpu) and the demo corpus built with that build's CLI, as scripts/demo.sh builds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# `--precision auto` resolves by a timed calibration on first use (docs/encoder.md); pinned here so
# that no test depends on this machine's timings (tests that check auto itself unset it).
os.environ.setdefault("NOVELTY_AUTO_PRECISION", "f32")

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("NOVELTY_BUILD", ROOT / "build" / "cpu")).resolve()
sys.path.insert(0, str(BUILD / "python"))

import novelty  # noqa: E402

CLI = BUILD / "novelty"
IDEAS = ROOT / "data" / "ideas.jsonl"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Runs the build's CLI on the CPU; fails the test with its stderr when it fails."""
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("demo") / "corpus"
    demo = ROOT / "data" / "demo"
    run_cli("corpus", "import", "-q", "--format", "paperlists", "openalex", "--field", "ml", "biomed",
            "--in", str(demo / "ml_papers_demo.jsonl.gz"), str(demo / "biomed_demo.jsonl.gz"), "--out", str(out))
    run_cli("corpus", "add-vectors", str(out), "-q", "--vectors", str(demo / "vectors_minilm_f16.npy"),
            "--ids", str(demo / "vector_ids.txt"), "--embedder", "all-MiniLM-L6-v2", "--pooling", "mean")
    return str(out)


@pytest.fixture(scope="session")
def corpus(demo_dir: str) -> novelty.Corpus:
    return novelty.Corpus.open(demo_dir)


@pytest.fixture(scope="session")
def index(corpus: novelty.Corpus) -> novelty.Index:
    return novelty.Index(corpus, device="cpu")


@pytest.fixture(scope="session")
def ideas() -> list[dict]:
    return [json.loads(line) for line in IDEAS.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def without_paths(records: list[dict]) -> list[dict]:
    """Score records without provenance["densities_path"], which says how that call found the
    densities (the corpus's store, a self-join, a search) and so differs between calls whose
    scores are the same."""
    out = json.loads(json.dumps(records))
    for record in out:
        record.get("provenance", {}).pop("densities_path", None)
    return out
