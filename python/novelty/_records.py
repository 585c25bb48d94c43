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


def _global_cutoff(cutoff: str | None) -> tuple[str, str] | None:
    return None if cutoff is None else _core.parse_date(cutoff, "cutoff")


class _Limits:
    """Row limits per cutoff, each looked up once."""

    def __init__(self, corpus: "_core.Corpus") -> None:
        self.corpus = corpus
        self.cache: dict[str, int] = {}

    def limit(self, date: tuple[str, str] | None) -> int:
        if date is None:
            return self.corpus.size
        text, effective = date
        if effective not in self.cache:
            self.cache[effective] = self.corpus.rows_through(text)
        return self.cache[effective]


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
    "exclude" (paper ids), in order. A record with text is embedded with the corpus's encoder; one
    without text whose id is a corpus paper searches as that paper; a record naming a corpus paper
    never finds itself. InputError/UsageError (ValueErrors) name the record as what[i]."""
    records = [_record(item, i, what) for i, item in enumerate(items)]
    seen: dict[str, int] = {}
    for i, r in enumerate(records):
        if r["id"] in seen:
            raise _core.InputError(f"{what}[{i}]: id '{r['id']}' repeats {what}[{seen[r['id']]}]")
        seen[r["id"]] = i
    default_date = _global_cutoff(cutoff)
    limits = _Limits(corpus)
    global_rows, global_unknown = _rows_of(corpus, exclude)
    out = Resolved([], None, [], [], [], [], [], [])
    for i, r in enumerate(records):
        try:
            date = _core.parse_date(r["date"], "date") if r["date"] is not None else default_date
        except ValueError as e:
            raise _core.InputError(f"{what}[{i}]: {e}") from None
        own_rows, own_unknown = _rows_of(corpus, r["exclude"])
        self_row = corpus.find_row(r["id"])
        out.ids.append(r["id"])
        out.cutoffs.append("" if date is None else date[0])
        out.row_limit.append(limits.limit(date))
        out.excluded.append(global_rows + own_rows + ([self_row] if self_row is not None else []))
        out.excluded_ids.append(list(exclude) + r["exclude"] + ([r["id"]] if self_row is not None else []))
        out.unknown_excluded.append(global_unknown + own_unknown)
        has_text = not (_blank(r["title"]) and _blank(r["text"]))
        out.texts.append(_core.embedding_text(r["title"], r["text"]) if has_text else _paper_text(corpus, self_row))
        if not has_text and self_row is None:
            raise _core.InputError(f"{what}[{i}]: {what[:-1]} '{r['id']}' has no text and is not the id of a corpus paper")
    if need_vectors:
        out.vectors = _vectors(corpus, records, out, embedder)
    return out


def _rows_of(corpus: "_core.Corpus", ids: Sequence[str]) -> tuple[list[int], int]:
    rows, unknown = [], 0
    for id in ids:
        row = corpus.find_row(str(id))
        if row is None:
            unknown += 1
        else:
            rows.append(row)
    return rows, unknown


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
    date = _global_cutoff(cutoff)
    limit = _Limits(corpus).limit(date)
    rows, unknown = _rows_of(corpus, exclude)
    return Resolved(
        ids=[str(i) for i in range(n)],
        vectors=array,
        texts=[""] * n,
        cutoffs=["" if date is None else date[0]] * n,
        row_limit=[limit] * n,
        excluded=[list(rows) for _ in range(n)],
        excluded_ids=[list(exclude) for _ in range(n)],
        unknown_excluded=[unknown] * n,
    )
