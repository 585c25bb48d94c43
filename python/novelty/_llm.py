"""novelty.LLMSettings: an OpenAI-compatible LLM and how to call it, as the --llm flags of the CLI."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class LLMSettings:
    """The LLM of `novelty.retrieve(llm=...)`, with the meaning of `novelty retrieve`'s flags.

    url: the server's base URL (http://host:8000/v1), or "env" for $NOVELTY_LLM_BASE_URL
    (--llm). model: "" = $NOVELTY_LLM_MODEL, else the server's model when its /models lists
    exactly one (--llm-model). key: "" = $NOVELTY_LLM_API_KEY, else $OPENAI_API_KEY (--llm-key).
    concurrency: requests in flight at most (--concurrency). timeout: seconds per attempt
    (--timeout). retries: after the first attempt (--retries). max_tokens: per answer, 0 = the
    server's default (--max-tokens). cache: an SQLite file of answers, "" = none (--cache; the
    CLI's default is the corpus's cache directory). The same settings as novelty.claims's llm,
    llm_model, llm_key, concurrency, timeout, retries, max_tokens and cache.
    """

    url: str = "env"
    model: str = ""
    key: str = ""
    concurrency: int = 8
    timeout: float = 120.0
    retries: int = 5
    max_tokens: int = 0
    cache: str | os.PathLike[str] = ""


def llm_settings(llm: LLMSettings | str | None) -> LLMSettings | None:
    """A URL (or "env") is LLMSettings(url); None and "" are no LLM."""
    if llm is None or llm == "":
        return None
    if isinstance(llm, LLMSettings):
        return llm
    if isinstance(llm, str) and llm:
        return LLMSettings(llm)
    raise TypeError(f"llm must be an LLMSettings, a base URL or 'env', not {llm!r}")
