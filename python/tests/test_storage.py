"""The CPU index with bf16 or int8 storage (Index(storage="bf16"), Index(storage="int8")) gives the
f32 index's results bit for bit: neighbours, similarities, ties, and the scores built on its
self-join densities."""

from __future__ import annotations

import numpy as np
import pytest

import novelty


@pytest.fixture(scope="module", params=["bf16", "int8"])
def narrow_storage(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def narrow_index(narrow_storage: str, corpus: novelty.Corpus) -> novelty.Index:
    return novelty.Index(corpus, device="cpu", storage=narrow_storage)


def test_narrow_storage_is_labelled(narrow_storage: str, narrow_index: novelty.Index, index: novelty.Index) -> None:
    assert narrow_index.label == "cpu-" + narrow_storage
    assert index.label == "cpu"
    assert narrow_index.device == "cpu"


def test_narrow_search_equals_f32_bit_for_bit(corpus: novelty.Corpus, index: novelty.Index,
                                              narrow_index: novelty.Index) -> None:
    rows = np.asarray(corpus.vectors()[:40], dtype=np.float32)
    noise = np.random.default_rng(3).standard_normal((40, rows.shape[1])).astype(np.float32)
    queries = np.concatenate([rows, rows + 0.05 * noise])
    for k in (1, 10, 100):
        got, want = narrow_index.search(queries, k=k), index.search(queries, k=k)
        assert np.array_equal(got.rows, want.rows), k
        assert np.array_equal(got.similarities.view(np.uint32), want.similarities.view(np.uint32)), k


def test_narrow_scores_equal_f32(index: novelty.Index, narrow_index: novelty.Index, ideas: list[dict]) -> None:
    want = novelty.score(index, ideas[:8])
    got = novelty.score(narrow_index, ideas[:8])
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        g, w = dict(g), dict(w)
        assert g["provenance"]["backend"] == narrow_index.label and w["provenance"]["backend"] == "cpu"
        g.pop("provenance"), w.pop("provenance")
        assert g == w


def test_cpu_storage_names_are_checked(corpus: novelty.Corpus) -> None:
    with pytest.raises(novelty.UsageError) as raised:
        novelty.Index(corpus, device="cpu", storage="f16")
    assert "f32, bf16 or int8" in str(raised.value)
