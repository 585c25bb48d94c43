"""novelty.Corpus: a corpus directory (docs/formats.md), opened read-only."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Sequence

import numpy as np

from . import _core
from ._embed import Embedder, resolve_embedder
from ._paths import require_path

Progress = Callable[[int, int], None]


class Corpus:
    """An open corpus: papers (SQLite), one normalised vector per paper, and its manifest.

    Rows are in publication-date order (partial dates count as the last day of their period),
    undated papers last, ties by id; a cutoff date is therefore a row prefix (rows_through).
    """

    def __init__(self, handle: "_core.Corpus") -> None:
        self._c = handle

    # -- making and opening ---------------------------------------------------------------
    @classmethod
    def open(cls, dir: str | os.PathLike[str]) -> "Corpus":
        """Opens a corpus directory. FileNotFoundError when it does not exist; CorpusError when it
        is incomplete or differs from its manifest (the same checks as the CLI)."""
        return cls(_core.Corpus.open(require_path(dir, "corpus directory")))

    @classmethod
    def import_(
        cls,
        sources: Sequence[tuple[str, str] | tuple[str, str, str]],
        out: str | os.PathLike[str],
        *,
        overwrite: bool = False,
        skip_invalid: bool = False,
        progress: Progress | None = None,
    ) -> "Corpus":
        """Imports paper metadata into a new corpus directory `out` and opens it.

        sources: (path, format) or (path, format, field) per input file; format is jsonl, arxiv,
        openalex or paperlists (as `novelty corpus import --format`). progress(records, 0) is
        called now and then. InputError (a ValueError) names file and line of a bad record.
        """
        triples = []
        for source in sources:
            path, fmt, field = (tuple(source) + ("",))[:3]
            triples.append((require_path(path, "input file"), fmt, field))
        _core.import_corpus(triples, os.fspath(out), overwrite, skip_invalid, progress)
        return cls.open(out)

    def reopen(self) -> "Corpus":
        """The same directory opened again (after add_vectors or embed changed it)."""
        return Corpus.open(self.dir)

    def add_vectors(
        self,
        vectors: np.ndarray,
        ids: Sequence[str] | None = None,
        *,
        embedder: str = "external",
        pooling: str = "",
        dtype: str | None = None,
        order: str = "input",
    ) -> "Corpus":
        """Attaches vectors (N x D float32 or float16, one per paper) and returns the reopened corpus.

        ids[i] names the paper of row i; without ids, `order` says whose row it is ("input": the
        import's record order, "corpus": corpus row order). Rows are L2-normalised; NaN, Inf and
        zero rows are refused (InputError naming the papers) and nothing changes. dtype: storage
        "f32" or "f16" (default: the array's). Caches computed from earlier vectors are removed.
        """
        array = np.asarray(vectors)
        if array.dtype not in (np.float32, np.float16) or array.ndim != 2:
            raise _core.UsageError("vectors must be a 2-D float32 or float16 array")
        with tempfile.TemporaryDirectory(prefix="novelty-vectors-") as tmp:
            npy = os.path.join(tmp, "vectors.npy")
            np.save(npy, np.ascontiguousarray(array))
            ids_path = ""
            if ids is not None:
                ids_path = os.path.join(tmp, "ids.txt")
                with open(ids_path, "w", encoding="utf-8") as f:
                    f.writelines(f"{i}\n" for i in ids)
            _core.add_vectors(self.dir, npy, ids_path, order, dtype or "", embedder, pooling)
        self._c = _core.Corpus.open(self.dir)
        return self

    def embed(
        self,
        embedder: Embedder | str | None = None,
        *,
        batch: int = 256,
        resume: bool = False,
        dtype: str = "f32",
        progress: Progress | None = None,
    ) -> "Corpus":
        """Embeds every paper (title and abstract) with `embedder` (default: the built-in
        all-MiniLM-L6-v2) and attaches the vectors, as `novelty corpus embed`; resumable."""
        chosen = resolve_embedder(embedder)
        _core.embed_corpus(self.dir, chosen._e, batch, resume, dtype, progress)
        self._c = _core.Corpus.open(self.dir)
        return self

    # -- what it holds --------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """The manifest (manifest.json) as a dict: count, dim, dtype, embedder, sources, dates..."""
        with open(os.path.join(self.dir, "manifest.json"), encoding="utf-8") as f:
            return json.load(f)

    @property
    def dir(self) -> str:
        return self._c.dir

    @property
    def size(self) -> int:
        """Papers (rows)."""
        return self._c.size

    def __len__(self) -> int:
        return self._c.size

    @property
    def dim(self) -> int:
        """Vector dimension, 0 without vectors."""
        return self._c.dim

    @property
    def embedder(self) -> str | None:
        """The recorded embedder's name, None when none is recorded."""
        return self._c.embedder

    @property
    def identity(self) -> str:
        """SHA-256 over the papers' and vectors' checksums (the "corpus" of provenance)."""
        return self._c.identity

    def vectors(self) -> np.ndarray:
        """The vectors, size x dim, float32 or float16: a read-only view of vectors.npy (no copy)."""
        return self._c.vectors()

    def paper(self, row: int) -> dict[str, Any]:
        """The paper at `row`: {row, id, title, abstract, date, field, venue, citations, extra_json}."""
        return self._c.paper(row)

    def find_row(self, id: str) -> int | None:
        """The row of the paper with this id, None when there is none."""
        return self._c.find_row(id)

    def rows_through(self, date: str) -> int:
        """Rows published on or before `date` (YYYY, YYYY-MM, YYYY-MM-DD): rows [0, result)."""
        return self._c.rows_through(date)

    def ids(self, rows: Sequence[int] | np.ndarray) -> list[str]:
        """The ids of `rows` ("" for -1, a padding slot)."""
        return self._c.ids([int(r) for r in np.asarray(rows).ravel()])

    def index(self, device: str = "auto", **options: Any) -> "Any":
        """A search index over this corpus (novelty.Index(self, device, ...))."""
        from ._index import Index

        return Index(self, device=device, **options)

    def __repr__(self) -> str:
        return f"novelty.Corpus({self.dir!r}, papers={self.size}, dim={self.dim})"
