"""Several Python threads calling one index (and its corpus) at once get what one thread gets."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import novelty
from conftest import without_paths


def test_threads_share_one_index(index: novelty.Index, corpus: novelty.Corpus, ideas: list[dict]) -> None:
    rng = np.random.default_rng(11)
    batches = [rng.standard_normal((40, corpus.dim)).astype(np.float32) for _ in range(24)]
    expected = [index.search(b, k=9) for b in batches]
    scores = novelty.score(index, ideas[:3])
    ranked = novelty.retrieve(index, ideas[:2], k=5, methods=["dense", "bm25"])
    papers = [corpus.paper(row) for row in range(0, corpus.size, 97)]

    def work(i: int) -> bool:
        kind = i % 4
        if kind == 0:
            got = index.search(batches[i % len(batches)], k=9)
            want = expected[i % len(batches)]
            return np.array_equal(got.rows, want.rows) and got.ids == want.ids
        if kind == 1:
            return without_paths(novelty.score(index, ideas[:3])) == without_paths(scores)
        if kind == 2:
            return novelty.retrieve(index, ideas[:2], k=5, methods=["dense", "bm25"]) == ranked
        return [corpus.paper(row) for row in range(0, corpus.size, 97)] == papers

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, range(48)))
