"""novelty.Index: a corpus loaded once into a search backend and searched many times."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from . import _core
from ._corpus import Corpus
from ._records import resolve_array, rows_of


class SearchResult(NamedTuple):
    """Top-k of each query.

    similarities: float32 (n, k); rows: int64 (n, k); ids: per query the ids of its found rows
    (a list of counts[i] strings). Query i's neighbours are by similarity descending, ties by
    lower row; when fewer than k rows are searchable the remaining slots hold row -1 and
    similarity -inf (and ids has fewer than k entries).
    """

    similarities: np.ndarray
    rows: np.ndarray
    ids: list[list[str]]


def _per_query(value: Any, n: int, name: str) -> list[Any]:
    """A value given once for every query, or a sequence of one per query."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise _core.UsageError(f"{name} has {len(value)} entries for {n} queries")
        return list(value)
    return [value] * n


def _exclude_lists(exclude: Any, n: int) -> list[list[str]]:
    if isinstance(exclude, str):
        return [[exclude] for _ in range(n)]
    items = list(exclude)
    if all(isinstance(x, (str, int)) for x in items):  # ids for every query
        return [[str(x) for x in items] for _ in range(n)]
    if len(items) != n:
        raise _core.UsageError(f"exclude has {len(items)} lists for {n} queries")
    return [[str(x) for x in (lst or [])] for lst in items]


class Index:
    """A corpus's vectors loaded into a search backend (faiss's Index, cuVS's brute_force).

    device: "auto" (CUDA when compiled in and a GPU is present, else the CPU), "cpu", "cuda", or
    "cuda-emulated" (the CUDA backend on an emulated device in host memory: its logic tested without
    a GPU, in every build; never a GPU result).
    storage: how the backend holds the corpus. On the CPU "f32" (the default), "bf16" or "int8" (a
    half- or quarter-size copy of the rows that screens every product, the candidates re-scored in
    float32, so results equal "f32"'s bit for bit); on CUDA "f16" (the default), "bf16" or "f32" (the CPU backend's neighbours exactly).
    None: the backend's default. memory_mib: GPU memory budget (0 = 90% of free). threads: CPU
    workers (0 = all cores). Several Python threads may call one Index at once: the engine serves
    one call at a time and the others wait with the GIL released.
    """

    def __init__(
        self, corpus: Corpus | str, device: str = "auto", *, storage: str | None = None, memory_mib: int = 0, threads: int = 0
    ) -> None:
        self.corpus = corpus if isinstance(corpus, Corpus) else Corpus.open(corpus)
        self._i = _core.Index(self.corpus._c, device, storage or "", memory_mib, threads)

    @property
    def device(self) -> str:
        """"cpu", "cuda" or "cuda-emulated"."""
        return self._i.device

    @property
    def label(self) -> str:
        """What provenance records: "cpu", "cpu-bf16", "cpu-int8", "cuda-f16", "cuda-bf16", "cuda-f32", or "cuda-emu-<storage>"."""
        return self._i.label

    def search(
        self,
        queries: np.ndarray,
        k: int = 10,
        cutoffs: str | Sequence[str | None] | None = None,
        exclude: Sequence[str] | Sequence[Sequence[str]] | None = None,
        *,
        filter: Mapping[str, Any] | None = None,
        with_ids: bool = True,
    ) -> SearchResult:
        """Exact cosine top-k of each query (queries are L2-normalised by the engine).

        queries: (n, dim) or (dim,) array, float32 or float16, any strides. A C-contiguous
        float32 array is read in place (no copy); anything else is converted once.
        k: 1..2048. cutoffs: a date (YYYY, YYYY-MM, YYYY-MM-DD) for every query, or one per query
        (None = no cutoff): only papers published on or before it are searched. exclude: paper ids
        left out for every query, or one list per query (unknown ids are ignored). filter: the
        metadata filter of `novelty search`'s --field, --venue, --min-citations and --papers
        flags, as a dict {"field", "venue", "min_citations", "papers"} (see novelty.score).
        Cutoffs, exclusions and filters are resolved by the request layer, as the CLI's are.
        Returns SearchResult(similarities float32 (n, k), rows int64 (n, k), ids); see its doc for
        order and padding. A query with NaN/Inf or zero norm raises ValueError.
        """
        resolved = None
        if cutoffs is not None or exclude is not None or filter is not None:
            n = rows_of(queries)
            resolved = resolve_array(
                self.corpus._c, queries,
                cutoffs=None if cutoffs is None else _per_query(cutoffs, n, "cutoffs"),
                excludes=None if exclude is None else _exclude_lists(exclude, n),
                filter=filter,
            )
        sims, rows, counts = self._i.search(queries, k, resolved)
        ids: list[list[str]] = []
        if with_ids and rows.size:
            flat = self.corpus._c.ids(rows.ravel().tolist())
            ids = [flat[i * k : i * k + int(counts[i])] for i in range(rows.shape[0])]
        elif with_ids:
            ids = [[] for _ in range(rows.shape[0])]
        return SearchResult(sims, rows, ids)

    def __repr__(self) -> str:
        return f"novelty.Index({self.corpus.dir!r}, device={self.label!r})"
