"""Ideas and queries as Python gives them (dicts or an array), resolved against a corpus by the
request layer (novelty/request/resolver.hpp), as the CLI resolves a .jsonl or .npy file and the
server a request body: the dicts are read by the same record reader (sent as JSON), and each
record gets its cutoff, exclusions, own paper, metadata filter and vector there."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import numpy as np

from . import _core
from ._embed import Embedder, embedder_for_corpus


def _json_value(value: Any) -> Any:
    """numpy scalars and arrays as their Python values (json.dumps's default=)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def to_json(value: Any, what: str) -> str:
    """`value` as JSON text; UsageError naming `what` for NaN, infinities or values JSON cannot hold."""
    try:
        return json.dumps(value, default=_json_value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise _core.UsageError(f"{what}: {e}") from None


def filter_json(filter: Mapping[str, Any] | None) -> str | None:
    """A metadata filter ({"field", "venue", "min_citations", "papers"}) as JSON, None for none."""
    if filter is None:
        return None
    if not isinstance(filter, Mapping):
        raise _core.UsageError(f"filter: expected a dict such as {{'field': 'cs.LG'}}, got {type(filter).__name__}")
    return to_json(dict(filter), "filter")


def resolve_records(
    corpus: "_core.Corpus",
    items: Sequence[Mapping[str, Any]],
    *,
    what: str,
    cutoff: str | None,
    exclude: Sequence[str],
    embedder: Embedder | str | None,
    filter: Mapping[str, Any] | None = None,
    need_vectors: bool = True,
    need_texts: bool = False,
) -> "_core.Resolved":
    """Dicts with "id", optional "title", "text" (else "abstract"), "date" (a cutoff), "exclude"
    (paper ids) and "filter" (the record's own metadata filter), in order, read as the CLI reads
    a JSON Lines file. A record with text is embedded with the corpus's encoder (64 texts a call,
    as the CLI embeds them, so the same texts give the same bits); one without text whose id is
    a corpus paper searches as that paper; a record naming a corpus paper never finds itself.
    UsageError (a ValueError) names the record as what[i]."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise _core.UsageError(f"{what}: expected a list of dicts, got {type(items).__name__}")
    resolved = _core.resolve_records(
        corpus, to_json(list(items), what), what, cutoff, [str(x) for x in exclude], filter_json(filter),
        need_vectors, need_texts,
    )
    if resolved.n_to_embed:
        encoder = embedder_for_corpus(corpus.embedder, corpus.dir, embedder)
        resolved.embed(
            lambda texts: np.ascontiguousarray(encoder.embed(texts), dtype=np.float32), encoder.name, getattr(encoder, "precision", "")
        )
    return resolved


def rows_of(array: Any) -> int:
    """The number of query rows of an (n, dim) or (dim,) array."""
    return array.shape[0] if getattr(array, "ndim", 0) == 2 else 1


def resolve_array(
    corpus: "_core.Corpus",
    array: np.ndarray,
    *,
    cutoff: str | None = None,
    exclude: Sequence[str] = (),
    cutoffs: Sequence[str | None] | None = None,
    excludes: Sequence[Sequence[str]] | None = None,
    filter: Mapping[str, Any] | None = None,
) -> "_core.Resolved":
    """The rows of an (n, dim) array as records with ids "0".."n-1" and no own paper (as the CLI
    treats a .npy file): `cutoff` and `exclude` for every row, or `cutoffs` and `excludes` one per
    row; `filter` for every row. The array's vectors stay with the caller (read in place)."""
    n = rows_of(array)
    per_row_cutoffs = list(cutoffs) if cutoffs is not None else ([cutoff] * n if cutoff else [])
    per_row_excludes = [[str(x) for x in lst] for lst in excludes] if excludes is not None else []
    return _core.resolve_rows(corpus, n, per_row_cutoffs, per_row_excludes, [str(x) for x in exclude], filter_json(filter))
