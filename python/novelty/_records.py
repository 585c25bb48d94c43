"""Ideas and queries as Python gives them (dicts or an array), resolved against a corpus the way
the CLI resolves a .jsonl or .npy file: vectors, a row limit per cutoff, excluded rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from . import _core
from ._embed import Embedder, embedder_for_corpus

#: Texts per call to the encoder, as the CLI embeds them (the same batches give the same bytes).
EMBED_BATCH = 64


@dataclass
class Resolved:
    ids: list[str]
    vectors: np.ndarray | None                  # n x dim float32, or None when not needed
    texts: list[str]                            # embedding text (or the paper's, for a bare corpus id)
    cutoffs: list[str]                          # per record, "" = none
    row_limit: list[int]
    excluded: list[list[int]]
    excluded_ids: list[list[str]]
    unknown_excluded: list[int] = field(default_factory=list)


def _record(item: Any, i: int, what: str) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise _core.UsageError(f"{what}[{i}]: expected a dict with an 'id', got {type(item).__name__}")
    if "id" not in item or not isinstance(item["id"], (str, int)) or isinstance(item["id"], bool):
        raise _core.InputError(f"{what}[{i}]: needs an \"id\" (a string or an integer)")
    exclude = item.get("exclude", [])
    if not isinstance(exclude, (list, tuple)) or not all(isinstance(x, (str, int)) for x in exclude):
        raise _core.InputError(f"{what}[{i}]: \"exclude\" must be a list of paper ids")
    text = item.get("text")
    if text is None:
        text = item.get("abstract")
    date = item.get("date")
    return {
        "id": str(item["id"]),
        "title": item.get("title") or "",
        "text": text or "",
        "date": None if date is None else str(date),
        "exclude": [str(x) for x in exclude],
    }


def _blank(text: str) -> bool:
    return text.strip() == ""


def resolve_records(
    corpus: "_core.Corpus",
    items: Sequence[Mapping[str, Any]],
    *,
    what: str,
    cutoff: str | None,
    exclude: Sequence[str],
    embedder: Embedder | str | None,
    need_vectors: bool = True,
) -> Resolved:
    """Dicts with "id", optional "title", "text" (else "abstract"), "date" (a cutoff) and
    "exclude" (paper ids), in order. Cutoffs, exclusions and the record's own paper are resolved by
    the request layer's ScopeResolver (as for the CLI and the server). A record with text is
    embedded with the corpus's encoder; one without text whose id is a corpus paper searches as
    that paper; a record naming a corpus paper never finds itself. InputError/UsageError
    (ValueErrors) name the record as what[i]."""
    records = [_record(item, i, what) for i, item in enumerate(items)]
    seen: dict[str, int] = {}
    for i, r in enumerate(records):
        if r["id"] in seen:
            raise _core.InputError(f"{what}[{i}]: id '{r['id']}' repeats {what}[{seen[r['id']]}]")
        seen[r["id"]] = i
        if r["date"] is not None:
            try:
                _core.parse_date(r["date"], "date")
            except ValueError as e:
                raise _core.InputError(f"{what}[{i}]: {e}") from None
    out = _scopes(corpus, [r["id"] for r in records], [r["date"] for r in records],
                  [r["exclude"] for r in records], cutoff, exclude, own_paper=True)
    for i, r in enumerate(records):
        has_text = not (_blank(r["title"]) and _blank(r["text"]))
        self_row = None if has_text else corpus.find_row(r["id"])
        if not has_text and self_row is None:
            raise _core.InputError(f"{what}[{i}]: {what[:-1]} '{r['id']}' has no text and is not the id of a corpus paper")
        out.texts.append(_core.embedding_text(r["title"], r["text"]) if has_text else _paper_text(corpus, self_row))
    if need_vectors:
        out.vectors = _vectors(corpus, records, out, embedder)
    return out


def _scopes(
    corpus: "_core.Corpus",
    ids: list[str],
    dates: list[str | None],
    excludes: list[list[str]],
    cutoff: str | None,
    exclude: Sequence[str],
    *,
    own_paper: bool,
) -> Resolved:
    """Cutoffs, exclusions and own papers through the request layer's ScopeResolver."""
    limits, cutoffs, rows, excluded_ids, unknown = _core.resolve_scopes(
        corpus, ids, dates, excludes, cutoff, [str(x) for x in exclude], own_paper
    )
    return Resolved(list(ids), None, [], cutoffs, limits, rows, excluded_ids, unknown)


def _paper_text(corpus: "_core.Corpus", row: int | None) -> str:
    if row is None:
        return ""
    paper = corpus.paper(row)
    return _core.embedding_text(paper["title"], paper["abstract"])


def _vectors(corpus: "_core.Corpus", records: list[dict[str, Any]], out: Resolved, embedder: Any) -> np.ndarray:
    dim = corpus.dim
    vectors = np.zeros((len(records), dim), dtype=np.float32)
    to_embed = [i for i, r in enumerate(records) if not (_blank(r["title"]) and _blank(r["text"]))]
    textless = [i for i in range(len(records)) if i not in set(to_embed)]
    if textless:
        stored = corpus.vectors()
        for i in textless:
            vectors[i] = stored[corpus.find_row(records[i]["id"])].astype(np.float32)
    if to_embed:
        encoder = embedder_for_corpus(corpus.embedder, corpus.dir, embedder)
        for begin in range(0, len(to_embed), EMBED_BATCH):
            batch = to_embed[begin : begin + EMBED_BATCH]
            made = encoder.embed([out.texts[i] for i in batch])
            if made.shape[1] != dim:
                raise _core.UsageError(
                    f"the encoder '{encoder.name}' makes vectors of dimension {made.shape[1]} but the corpus has {dim}"
                )
            vectors[batch] = made
    return vectors


def resolve_array(
    corpus: "_core.Corpus", array: np.ndarray, *, cutoff: str | None, exclude: Sequence[str]
) -> Resolved:
    """An n x dim array of ideas: ids "0".."n-1", the same cutoff and exclusions for each, no
    self-exclusion (as the CLI treats a .npy file)."""
    n = array.shape[0] if array.ndim == 2 else 1
    ids = [str(i) for i in range(n)]
    out = _scopes(corpus, ids, [None] * n, [[] for _ in range(n)], cutoff, exclude, own_paper=False)
    out.vectors = array
    out.texts = [""] * n
    return out
