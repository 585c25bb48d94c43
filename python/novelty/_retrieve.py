"""novelty.retrieve: literature retrieval under a cutoff (dense, BM25, hybrid), as `novelty retrieve`."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from . import _core
from ._corpus import Corpus
from ._embed import Embedder
from ._index import Index
from ._records import resolve_records
from ._score import as_index


def retrieve(
    where: Index | Corpus | str,
    queries: Sequence[Mapping[str, Any]],
    *,
    k: int = 10,
    methods: Sequence[str] = ("dense",),
    cutoff: str | None = None,
    exclude: Sequence[str] = (),
    fusion_depth: int = 1000,
    embedder: Embedder | str | None = None,
    device: str = "auto",
) -> list[dict[str, Any]]:
    """Ranks the corpus for each query; one record per query, as `novelty retrieve --jsonl` writes:
    {"query", "cutoff", "searchable", "results": {method: [{"id", "row", "rank", "score", "title"}]}}.

    queries: dicts as for score() (id, title/text, date, exclude). methods: any of "dense"
    (cosine), "bm25" (SQLite FTS5) and "hybrid" (reciprocal-rank fusion of both, each ranked to
    fusion_depth). Rankings are best first, ties by lower row; only rows published on or before
    the query's cutoff, never its excluded rows nor its own paper. LLM rewriting (--expand,
    --hyde) is the CLI's and the server's.
    """
    index = as_index(where, device)
    c = index.corpus._c
    need_dense = any(m != "bm25" for m in methods)
    resolved = resolve_records(
        c, list(queries), what="queries", cutoff=cutoff, exclude=list(exclude), embedder=embedder,
        need_vectors=need_dense,
    )
    vectors = resolved.vectors if resolved.vectors is not None else np.zeros((0, c.dim), np.float32)
    results = _core.retrieve(
        index._i, vectors, resolved.texts, resolved.row_limit, resolved.excluded, list(methods), k, fusion_depth
    )
    return [
        {"query": resolved.ids[i], "cutoff": resolved.cutoffs[i] or None, "searchable": resolved.row_limit[i],
         "results": results[i]}
        for i in range(len(results))
    ]
