"""Embedder(precision=) chooses the built-in CPU encoder's arithmetic as --precision does: bf16
and int8 give the CLI's vectors exactly, within cosine 0.999 of f32's; unknown names are usage
errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import novelty
from conftest import IDEAS, run_cli


def idea_texts(ideas: list[dict]) -> list[str]:
    return [novelty._core.embedding_text(i.get("title", ""), i.get("text", "")) for i in ideas]


@pytest.mark.parametrize("precision", ["bf16", "int8"])
def test_narrow_precision_matches_the_cli_and_stays_close_to_f32(
    tmp_path: Path, ideas: list[dict], precision: str
) -> None:
    narrow = novelty.Embedder(precision=precision)
    f32 = novelty.Embedder(precision="f32")
    assert (narrow.precision, f32.precision) == (precision, "f32")
    got, want = narrow.embed(idea_texts(ideas)), f32.embed(idea_texts(ideas))
    out = tmp_path / f"ideas_{precision}.npy"
    run_cli("embed", "--in", str(IDEAS), "--out", str(out), "--precision", precision, "-q")
    assert np.array_equal(got, np.load(out))
    cos = np.sum(got * want, axis=1)
    assert cos.min() >= 0.999 and cos.mean() >= 0.9995, cos
    assert not np.array_equal(got, want)  # the narrow products were used


def test_auto_resolves_to_a_named_precision() -> None:
    assert novelty.Embedder(precision="auto").precision in ("f32", "bf16", "int8")
    assert novelty.Embedder().precision == novelty.Embedder(precision="auto").precision


@pytest.mark.parametrize("name", ["int4", "fp16", ""])
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
    assert "ideas_embedder_precision" not in result["provenance"]  # given as a vector
    idea = {"id": "i", "title": "Sparse attention", "text": "Patterns for long documents."}
    [embedded] = novelty.score(corpus, [idea], p=2, q=1, embedder=novelty.Embedder(precision="int8"))
    assert embedded["provenance"]["embedder_precision"] == "bf16"
    assert embedded["provenance"]["ideas_embedder_precision"] == "int8"


def test_the_default_precision_is_auto_and_follows_its_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedder() resolves "auto" as the CLI does: NOVELTY_AUTO_PRECISION pins it (docs/encoder.md)."""
    for pinned in ("bf16", "int8", "f32"):
        monkeypatch.setenv("NOVELTY_AUTO_PRECISION", pinned)
        assert novelty.Embedder().precision == pinned
    monkeypatch.setenv("NOVELTY_AUTO_PRECISION", "fp16")
    with pytest.raises(novelty.UsageError):
        novelty.Embedder()
