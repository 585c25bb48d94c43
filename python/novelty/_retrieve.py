"""novelty.retrieve: literature retrieval under a cutoff (dense, BM25, hybrid), with optional query
rewriting by an LLM (expansion, HyDE), as `novelty retrieve`."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Sequence

from . import _core
from ._corpus import Corpus
from ._embed import Embedder, embedder_for_corpus
from ._index import Index
from ._llm import LLMSettings, llm_settings
from ._paths import require_path
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
    filter: Mapping[str, Any] | None = None,
    fusion_depth: int = 1000,
    embedder: Embedder | str | None = None,
    device: str = "auto",
    expand: int = 0,
    expand_mode: str = "multi",
    hyde: int = 0,
    fuse_original: bool = False,
    rewrites: str | os.PathLike[str] | None = None,
    llm: LLMSettings | str | None = None,
) -> list[dict[str, Any]]:
    """Ranks the corpus for each query; one record per query, in order, as `novelty retrieve
    --jsonl` writes it: {"query", "cutoff", "searchable", "results": {tag: [{"id", "row", "rank",
    "score", "title"}]}}.

    queries: dicts as for score() (id, title/text, date, exclude). methods: any of "dense"
    (cosine), "bm25" (SQLite FTS5) and "hybrid" (reciprocal-rank fusion of both, each ranked to
    fusion_depth). Rankings are best first, ties by lower row; only rows published on or before
    the query's cutoff, never its excluded rows nor its own paper. filter: the metadata filter of
    `novelty retrieve`'s --field, --venue, --min-citations and --papers flags (see score()),
    applied with each query's own "filter".

    Query rewriting (docs/retrieval.md), as `novelty retrieve --expand N --hyde N`: expand=N fuses
    the rankings of up to N rewritten questions (expand_mode="multi"), or, with
    expand_mode="single" and expand=1, ranks the question with one LLM-written continuation
    appended; hyde=N fuses the rankings of up to N hypothetical abstracts; fuse_original=True
    fuses the query's own ranking too. Each method then also gets the tags "METHOD+expand" and
    "METHOD+hyde", and the record "rewrites" (the texts used), "expand_mode", "fuse_original" and
    "rewrite_errors" (a failed LLM call: that query ranked its own text). The rewrites come from
    `rewrites` (a JSON Lines file: {"id", "expand": [...], "hyde": [...]} per line, or a
    retrieve --jsonl output) or from the LLM `llm`: an LLMSettings (url, model, key, concurrency,
    timeout, retries, max_tokens, cache: the --llm flags), or a base URL alone (or "env" for
    $NOVELTY_LLM_BASE_URL). An unreachable server without a model named raises UsageError with
    the CLI's message; with one named, each failed query is noted in its record.
    """
    index = as_index(where, device)
    c = index.corpus._c
    need_dense = any(m != "bm25" for m in methods)
    rewriting = expand > 0 or hyde > 0
    settings = llm_settings(llm)
    if not rewriting and (settings is not None or rewrites is not None):
        raise _core.UsageError("llm and rewrites go with expand=N or hyde=N")
    if settings is not None and rewrites is not None:
        raise _core.UsageError("llm and rewrites are alternatives: make the rewrites with an LLM, or read them from a file")
    resolved = resolve_records(
        c, queries, what="queries", cutoff=cutoff, exclude=list(exclude), embedder=embedder, filter=filter,
        need_vectors=need_dense, need_texts=any(m != "dense" for m in methods) or rewriting,
    )
    # The rewrites' texts are embedded in C++ with the corpus's encoder (the one the queries used).
    encoder = embedder_for_corpus(c.embedder, c.dir, embedder)._e if need_dense and rewriting else None
    s = settings or LLMSettings("")
    lines = _core.retrieve(
        index._i, encoder, resolved, list(methods), k, fusion_depth, expand, expand_mode, hyde, fuse_original,
        "" if rewrites is None else require_path(rewrites, "rewrites file"), s.url, s.model, s.key, s.concurrency,
        s.timeout, s.retries, s.max_tokens, os.fspath(s.cache),
    )
    return [json.loads(line) for line in lines]
