"""Embedder(precision=) chooses the built-in CPU encoder's arithmetic as --precision does: bf16
gives the CLI's bf16 vectors exactly, within cosine 0.999 of f32's; int8 and unknown names are
usage errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import novelty
from conftest import IDEAS, run_cli


def idea_texts(ideas: list[dict]) -> list[str]:
    return [novelty._core.embedding_text(i.get("title", ""), i.get("text", "")) for i in ideas]


def test_bf16_matches_the_cli_and_stays_close_to_f32(tmp_path: Path, ideas: list[dict]) -> None:
    bf16 = novelty.Embedder(precision="bf16")
    f32 = novelty.Embedder(precision="f32")
    assert (bf16.precision, f32.precision) == ("bf16", "f32")
    got, want = bf16.embed(idea_texts(ideas)), f32.embed(idea_texts(ideas))
    out = tmp_path / "ideas_bf16.npy"
    run_cli("embed", "--in", str(IDEAS), "--out", str(out), "--precision", "bf16", "-q")
    assert np.array_equal(got, np.load(out))
    cos = np.sum(got * want, axis=1)
    assert cos.min() >= 0.999 and cos.mean() >= 0.9995, cos
    assert not np.array_equal(got, want)  # bf16 was used


def test_auto_resolves_to_a_named_precision() -> None:
    assert novelty.Embedder(precision="auto").precision in ("f32", "bf16")
    assert novelty.Embedder().precision == novelty.Embedder(precision="auto").precision


@pytest.mark.parametrize("name", ["int8", "fp16", ""])
def test_other_precisions_are_usage_errors(name: str) -> None:
    with pytest.raises(novelty.UsageError) as raised:
        novelty.Embedder(precision=name)
    assert "precision" in str(raised.value)


def test_corpus_embed_records_the_precision_and_score_reports_it(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "import" / "generic.jsonl"
    corpus = novelty.Corpus.import_([(str(fixture), "jsonl")], tmp_path / "c")
    corpus.embed(novelty.Embedder(precision="bf16"))
    assert corpus.info()["embedder"]["precision"] == "bf16"
    vector = novelty.Embedder(precision="bf16").embed(["Sparse attention for long documents"])
    [result] = novelty.score(corpus, vector, p=2, q=1)
    assert result["provenance"]["embedder_precision"] == "bf16"
