"""novelty.score: RND, ND (absolute density), HD and ON with evidence, as `novelty score`."""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import _core
from ._corpus import Corpus
from ._embed import Embedder
from ._index import Index
from ._records import resolve_array, resolve_records

DEFAULT_METHODS = ("rnd", "hd", "on", "density")


def as_index(where: Index | Corpus | str, device: str = "auto") -> Index:
    """An Index for `where`: itself, or a new one over a Corpus or a corpus directory."""
    return where if isinstance(where, Index) else Index(where, device)


def score(
    where: Index | Corpus | str,
    ideas: Sequence[Mapping[str, Any]] | np.ndarray,
    *,
    p: int = 100,
    q: int = 50,
    methods: Sequence[str] = DEFAULT_METHODS,
    cutoff: str | None = None,
    exclude: Sequence[str] = (),
    split: str | None = None,
    historical_from: str | None = None,
    include_self: bool = False,
    extra: int = 8,
    evidence: int = 10,
    embedder: Embedder | str | None = None,
    filter: Mapping[str, Any] | None = None,
    device: str = "auto",
    progress: Callable[[int, int], None] | None = None,
    densities: str = "auto",
) -> list[dict[str, Any]]:
    """Scores each idea against the corpus; one record (dict) per idea, in order.

    where: an Index (reused: the fastest), a Corpus or a corpus directory. ideas: dicts with
    "id", "title"/"text" (embedded with the corpus's encoder), optional "date" (cutoff) and
    "exclude" (paper ids) -- a record without text whose id is a corpus paper scores as that
    paper, and a record naming a corpus paper never counts itself -- or an (n, dim) float32/float16
    array (ids "0".."n-1"). The options are those of `novelty score` (docs/scoring.md):
    p, q, methods (any of rnd, hd, on, density, density_p, rnd_euclid, rel_hd, rnd_hd), cutoff
    and exclude (for every idea), split, historical_from ("none" for no lower bound),
    include_self, extra, evidence; filter: the metadata filter of `novelty score`'s --field, --venue,
    --min-citations and --papers flags, as a dict {"field", "venue", "min_citations", "papers"}
    (each optional: a name or a list of names, a whole number, a list of paper ids), applied with
    each idea's own "filter".

    Each record is the JSON object `novelty score --out x.jsonl` writes, parsed:
    {"id", "scores": {...}, "nd", "neighbors": [{"id", "row", "sim", "title", "nd"?}] (nearest
    first), "provenance": {...}}. ValueError when an idea's cutoff leaves too few papers.
    progress(done, total) follows neighbour densities computed on demand (then cached).
    densities: how the densities the corpus's store lacks are found, as `novelty score
    --densities`: "auto" (a self-join of each prefix the ideas reach most of, where cheaper than
    searching those papers one by one), "on-demand" or "self-join" (the reference); all give the
    same scores, and provenance["densities_path"] says which served each idea.
    """
    index = as_index(where, device)
    c = index.corpus._c
    vectors = None
    if isinstance(ideas, np.ndarray):
        resolved = resolve_array(c, ideas, cutoff=cutoff, exclude=list(exclude), filter=filter)
        vectors = ideas
    else:
        resolved = resolve_records(
            c, ideas, what="ideas", cutoff=cutoff, exclude=list(exclude), embedder=embedder, filter=filter
        )
    lines = _core.score(
        index._i, resolved, vectors, p, q, set(methods), split or "", historical_from or "", include_self, extra,
        evidence, progress, densities,
    )
    return [json.loads(line) for line in lines]
