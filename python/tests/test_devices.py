"""Without a usable GPU (a CPU build, or a cu13 build on a machine without a card), asking for the
CUDA device raises a NoveltyError naming the problem, never a crash, and "auto" falls back to the
CPU with the CPU's results."""

from __future__ import annotations

import numpy as np
import pytest

import novelty
from novelty import _core

pytestmark = pytest.mark.skipif(_core.auto_device() == "cuda", reason="a GPU is present: tests/gpu covers it")


def test_cuda_without_a_gpu_is_a_clear_error(corpus: novelty.Corpus) -> None:
    with pytest.raises(novelty.NoveltyError) as raised:
        novelty.Index(corpus, device="cuda")
    message = str(raised.value)
    assert "CUDA" in message or "cuda" in message, message


def test_auto_falls_back_to_the_cpu(corpus: novelty.Corpus, index: novelty.Index) -> None:
    auto = novelty.Index(corpus, device="auto")
    assert auto.device == "cpu"
    queries = np.asarray(corpus.vectors()[:3], dtype=np.float32)
    got, want = auto.search(queries, k=5), index.search(queries, k=5)
    assert np.array_equal(got.rows, want.rows) and np.array_equal(got.similarities, want.similarities)
