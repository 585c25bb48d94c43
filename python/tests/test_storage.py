"""The CPU index with bf16 or int8 storage (Index(storage="bf16"), Index(storage="int8")) gives the
f32 index's results bit for bit: neighbours, similarities, ties, and the scores built on its
self-join densities."""

from __future__ import annotations

import numpy as np
import pytest

import novelty


@pytest.fixture(scope="module")
def bf16_index(corpus: novelty.Corpus) -> novelty.Index:
    return novelty.Index(corpus, device="cpu", storage="bf16")


def test_bf16_storage_is_labelled(bf16_index: novelty.Index, index: novelty.Index) -> None:
    assert bf16_index.label == "cpu-bf16"
    assert index.label == "cpu"
    assert bf16_index.device == "cpu"


def test_bf16_search_equals_f32_bit_for_bit(corpus: novelty.Corpus, index: novelty.Index,
                                            bf16_index: novelty.Index) -> None:
    rows = np.asarray(corpus.vectors()[:40], dtype=np.float32)
    noise = np.random.default_rng(3).standard_normal((40, rows.shape[1])).astype(np.float32)
    queries = np.concatenate([rows, rows + 0.05 * noise])
    for k in (1, 10, 100):
        got, want = bf16_index.search(queries, k=k), index.search(queries, k=k)
        assert np.array_equal(got.rows, want.rows), k
        assert np.array_equal(got.similarities.view(np.uint32), want.similarities.view(np.uint32)), k


def test_bf16_scores_equal_f32(index: novelty.Index, bf16_index: novelty.Index, ideas: list[dict]) -> None:
    want = novelty.score(index, ideas[:8])
    got = novelty.score(bf16_index, ideas[:8])
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        g, w = dict(g), dict(w)
        assert g["provenance"]["backend"] == "cpu-bf16" and w["provenance"]["backend"] == "cpu"
        g.pop("provenance"), w.pop("provenance")
        assert g == w


def test_cpu_storage_names_are_checked(corpus: novelty.Corpus) -> None:
    with pytest.raises(novelty.UsageError) as raised:
        novelty.Index(corpus, device="cpu", storage="f16")
    assert "f32, bf16 or int8" in str(raised.value)


def test_int8_storage_equals_f32_bit_for_bit(corpus: novelty.Corpus, index: novelty.Index,
                                             ideas: list[dict]) -> None:
    int8_index = novelty.Index(corpus, device="cpu", storage="int8")
    assert int8_index.label == "cpu-int8"
    rows = np.asarray(corpus.vectors()[:40], dtype=np.float32)
    noise = np.random.default_rng(4).standard_normal((40, rows.shape[1])).astype(np.float32)
    queries = np.concatenate([rows, rows + 0.05 * noise])
    for k in (1, 10, 100):
        got, want = int8_index.search(queries, k=k), index.search(queries, k=k)
        assert np.array_equal(got.rows, want.rows), k
        assert np.array_equal(got.similarities.view(np.uint32), want.similarities.view(np.uint32)), k
    got, want = novelty.score(int8_index, ideas[:8]), novelty.score(index, ideas[:8])
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        g, w = dict(g), dict(w)
        assert g["provenance"]["backend"] == "cpu-int8" and w["provenance"]["backend"] == "cpu"
        g.pop("provenance"), w.pop("provenance")
        assert g == w
