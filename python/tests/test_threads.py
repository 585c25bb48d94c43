"""Several Python threads calling one index at once get what one thread gets."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import novelty


def test_threads_share_one_index(index: novelty.Index, corpus: novelty.Corpus, ideas: list[dict]) -> None:
    rng = np.random.default_rng(11)
    batches = [rng.standard_normal((40, corpus.dim)).astype(np.float32) for _ in range(16)]
    expected = [index.search(b, k=9) for b in batches]
    scores = novelty.score(index, ideas[:3])
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(lambda b: index.search(b, k=9), batches))
        scored = list(pool.map(lambda _: novelty.score(index, ideas[:3]), range(4)))
    for a, b in zip(found, expected):
        assert np.array_equal(a.rows, b.rows) and np.array_equal(a.similarities, b.similarities)
    assert all(s == scores for s in scored)
