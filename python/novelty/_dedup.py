"""novelty.dedup: near-duplicate clusters of ideas (docs/dedup.md), as `novelty dedup`."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import _core
from ._corpus import Corpus
from ._embed import Embedder, embedder_for_corpus
from ._index import Index
from ._score import as_index

#: Texts per call to the encoder, as the CLI embeds ideas (the same batches give the same bytes).
EMBED_BATCH = 64


def _blank(text: str) -> bool:
    return text.strip() == ""


def _records(ideas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each idea's id (a string or an integer, unique), title and text ("text", else "abstract")."""
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(ideas):
        if not isinstance(item, Mapping):
            raise _core.UsageError(f"ideas[{i}]: expected a dict with an 'id', got {type(item).__name__}")
        if not isinstance(item.get("id"), (str, int)) or isinstance(item.get("id"), bool):
            raise _core.InputError(f"ideas[{i}]: needs an \"id\" (a string or an integer)")
        text = item.get("text")
        r = {"id": str(item["id"]), "title": item.get("title") or "",
             "text": (item.get("abstract") if text is None else text) or ""}
        if not isinstance(r["title"], str) or not isinstance(r["text"], str):
            raise _core.InputError(f"ideas[{i}]: \"title\" and \"text\" must be strings")
        if r["id"] in seen:
            raise _core.InputError(f"ideas[{i}]: id '{r['id']}' repeats ideas[{seen[r['id']]}]")
        seen[r["id"]] = i
        records.append(r)
    return records


def _vectors(index: Index, records: list[dict[str, Any]], embedder: Embedder | str | None) -> tuple[np.ndarray, list[int]]:
    """The ideas' vectors, embedded with the corpus's encoder in the CLI's batches; an idea
    without text keeps a zero row and is inactive."""
    c = index.corpus._c
    active = [0 if _blank(r["title"]) and _blank(r["text"]) else 1 for r in records]
    vectors = np.zeros((len(records), c.dim), dtype=np.float32)
    todo = [i for i, a in enumerate(active) if a]
    if todo:
        encoder = embedder_for_corpus(c.embedder, c.dir, embedder)
        for begin in range(0, len(todo), EMBED_BATCH):
            batch = todo[begin : begin + EMBED_BATCH]
            vectors[batch] = encoder.embed([_core.embedding_text(records[i]["title"], records[i]["text"]) for i in batch])
    return vectors, active


def _member(records: list[dict[str, Any]], i: int, got: tuple, active: list[int], archive_ids: list[str] | None) -> dict[str, Any]:
    _, sim, mean, _, _, rows, sims = got
    m: dict[str, Any] = {"id": records[i]["id"], "line": i + 1, "sim": float(sim[i]),
                         "mean_sim": None if math.isnan(mean[i]) else float(mean[i])}
    if not active[i]:
        m["empty"] = True
    if archive_ids is not None:
        m["archive"] = None if rows[i] < 0 else {"id": archive_ids[i], "sim": float(sims[i])}
    return m


def dedup(
    where: Index | Corpus | str,
    ideas: Sequence[Mapping[str, Any]],
    *,
    threshold: float = 0.8,
    representative: str = "central",
    first_k: int = 32,
    against_corpus: bool = False,
    embedder: Embedder | str | None = None,
    device: str = "auto",
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Clusters of near-duplicate ideas, one record per cluster as `novelty dedup --out` writes
    them (docs/formats.md): {"cluster", "representative", "size", "members": [{"id", "line",
    "sim", "mean_sim", "empty"?, "archive"?}]}, clusters in the order of their earliest member.

    ideas: dicts with "id" and "title"/"text", embedded with the corpus's encoder; an idea without
    text is its own cluster, marked "empty". `line` is the idea's 1-based position. threshold:
    cosine at or above which two ideas are linked (single linkage), in [-1, 1]. representative:
    "central" or "first". against_corpus: each member also gets "archive", its closest corpus
    paper at or above the threshold ({"id", "sim"}) or None, as `novelty dedup --against DIR`.
    progress(done, total) follows the first pass.
    """
    index = as_index(where, device)
    records = _records(ideas)
    vectors, active = _vectors(index, records, embedder)
    got = _core.dedup(index._i, vectors, active, threshold, representative, first_k, against_corpus, progress)
    cluster, _, _, reps, _, rows, _ = got
    archive_ids = index.corpus._c.ids(list(rows)) if against_corpus else None
    members: list[list[int]] = [[] for _ in reps]
    for i, c in enumerate(cluster):
        members[c].append(i)
    return [
        {"cluster": c, "representative": records[reps[c]]["id"], "size": len(m),
         "members": [_member(records, i, got, active, archive_ids) for i in m]}
        for c, m in enumerate(members)
    ]
