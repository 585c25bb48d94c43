"""The CUDA backend on the emulated device (device="cuda-emulated", docs/cuda.md), from Python in
every build: its float32 storage gives the CPU index's rows and similarities bit for bit (the
emulator's tiles are the engine's fixed-order dot products), 16-bit storage the CPU's rows, and
its label says it is emulated."""

from __future__ import annotations

import numpy as np

import novelty


def test_emulated_cuda_index_answers_as_the_cpu(corpus: novelty.Corpus, index: novelty.Index) -> None:
    queries = np.asarray(corpus.vectors()[5:25], dtype=np.float32)
    want = index.search(queries, k=10)
    emulated = novelty.Index(corpus, device="cuda-emulated", storage="f32")
    assert emulated.device == "cuda-emulated"
    assert emulated.label == "cuda-emu-f32"
    got = emulated.search(queries, k=10)
    assert np.array_equal(got.rows, want.rows)
    assert np.array_equal(got.similarities, want.similarities)
    half = novelty.Index(corpus, device="cuda-emulated", storage="f16").search(queries, k=10)
    assert np.array_equal(half.rows[:, :5], want.rows[:, :5])
    assert np.allclose(half.similarities, want.similarities, atol=4e-3)
