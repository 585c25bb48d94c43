"""novelty.claims: the claim-level ClaimNov check (docs/claimnov.md), as `novelty claims`."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Mapping, Sequence

from . import _core
from ._corpus import Corpus
from ._embed import _DEFAULT_NAME, _is_url, default_model_dir
from ._paths import require_path


def _claims_encoder(corpus: Corpus, spec: str | None) -> "_core.Embedder":
    """A fresh encoder for the checker (it keeps it): the one named, else the corpus's own."""
    name = corpus.embedder
    if spec is None:
        if name == _DEFAULT_NAME:
            spec = "default"
        elif name and _is_url(name):
            spec = name
        else:
            raise _core.UsageError(f"the corpus {corpus.dir} records embedder '{name}'; give embedder= to embed claims")
    if spec == "default":
        return _core.Embedder.builtin(default_model_dir(), _DEFAULT_NAME, 0)
    if _is_url(spec):
        url, _, model = spec.rpartition("#") if "#" in spec else (spec, "", "")
        return _core.Embedder.http(url, model, "")
    return _core.Embedder.builtin(require_path(spec, "model directory"), "", 0)


class ClaimsChecker:
    """The ClaimNov check over one corpus, set up once and run on many batches of proposals.

    The settings are the flags of `novelty claims` (docs/claimnov.md): llm ("offline", the
    labelled approximation without an LLM; a base URL of an OpenAI-compatible server; or "env"
    for $NOVELTY_LLM_BASE_URL), llm_model, llm_key, judge ("auto", "rule", "llm" or a URL),
    judge_model, concurrency, timeout (seconds per attempt), retries, max_tokens, cache (an
    SQLite file of LLM answers), claims_cache (an SQLite file of pool papers' claims), window,
    alpha, weights ("problem=1,result=2"...), threshold. embedder: how claims are embedded (a
    spec string; default: the corpus's recorded encoder). One check runs at a time.
    """

    def __init__(
        self,
        corpus: Corpus | str,
        *,
        llm: str = "offline",
        llm_model: str = "",
        llm_key: str = "",
        judge: str = "auto",
        judge_model: str = "",
        concurrency: int = 8,
        timeout: float = 120.0,
        retries: int = 5,
        max_tokens: int = 0,
        cache: str | os.PathLike[str] = "",
        claims_cache: str | os.PathLike[str] = "",
        window: int = 64,
        alpha: float = 0.5,
        weights: str = "",
        threshold: float = 0.5,
        embedder: str | None = None,
    ) -> None:
        self.corpus = corpus if isinstance(corpus, Corpus) else Corpus.open(corpus)
        encoder = _claims_encoder(self.corpus, embedder)
        self._c = _core.ClaimsChecker.make(
            self.corpus.dir, encoder, llm, llm_model, llm_key, judge, judge_model, concurrency, timeout, retries,
            max_tokens, os.fspath(cache), os.fspath(claims_cache), window, alpha, weights, threshold,
        )

    @property
    def approximate(self) -> bool:
        """True when extraction and grading are the offline approximation (no LLM)."""
        return self._c.approximate

    def check(
        self,
        proposals: Sequence[Mapping[str, Any]],
        *,
        cutoff: str | None = None,
        exclude: Sequence[str] = (),
        pool: Sequence[str] | None = None,
        judge: str | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """One record per proposal, in order, with the keys `novelty claims --out` writes.

        proposals: dicts with "id", "title"/"text" (or "abstract"), optional "date" (cutoff),
        "exclude" (paper ids) and "pool" (its own candidate pool, corpus ids). cutoff, exclude and
        pool apply to proposals without their own; judge: "rule" or "llm" for this run.
        progress(stage, done, total) follows "pool claims", then "proposals". Bad records raise
        UsageError (a ValueError) naming the field.
        """
        body: dict[str, Any] = {"proposals": [dict(p) for p in proposals]}
        if cutoff is not None:
            body["cutoff"] = cutoff
        if exclude:
            body["exclude"] = [str(x) for x in exclude]
        if pool is not None:
            body["pool"] = [str(x) for x in pool]
        if judge is not None:
            body["judge"] = judge
        return json.loads(self._c.check(json.dumps(body), progress))["results"]


def claims(corpus: Corpus | str, proposals: Sequence[Mapping[str, Any]], **settings: Any) -> list[dict[str, Any]]:
    """ClaimsChecker(corpus, **settings).check(proposals, ...): the check in one call (the keyword
    arguments cutoff, exclude, pool, judge and progress go to check, the rest to the checker)."""
    run_keys = {"cutoff", "exclude", "pool", "judge", "progress"}
    run = {k: v for k, v in settings.items() if k in run_keys}
    setup = {k: v for k, v in settings.items() if k not in run_keys}
    return ClaimsChecker(corpus, **setup).check(proposals, **run)
