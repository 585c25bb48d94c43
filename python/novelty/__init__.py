"""novelty: how new is a research idea? Python bindings of the novelty engine.

Numpy arrays in and out, the GIL released while the engine works. See docs/python.md.

    import novelty
    corpus = novelty.Corpus.open("build/demo-corpus")
    index = novelty.Index(corpus)                       # device="auto": CUDA when present
    sims, rows, ids = index.search(queries, k=10)       # queries: n x dim float32/float16
    records = novelty.score(index, [{"id": "a", "title": "...", "text": "..."}])

Errors: ValueError for bad input (novelty.UsageError and novelty.InputError are both
ValueErrors and NoveltyErrors), FileNotFoundError for a missing file or directory,
novelty.CorpusError for a damaged corpus, novelty.NoveltyError for everything else.
"""

from . import _core
from ._core import CorpusError, InputError, NoveltyError, UsageError
from ._claims import ClaimsChecker, claims
from ._corpus import Corpus
from ._dedup import dedup
from ._embed import Embedder, default_model_dir, embed
from ._index import Index, SearchResult
from ._llm import LLMSettings
from ._retrieve import retrieve
from ._score import score
from . import eval

__version__: str = _core.__version__
#: True when this build has the CUDA backend (a cu13 wheel).
cuda_compiled: bool = _core.cuda_compiled()

__all__ = [
    "ClaimsChecker",
    "Corpus",
    "CorpusError",
    "Embedder",
    "Index",
    "InputError",
    "LLMSettings",
    "NoveltyError",
    "SearchResult",
    "UsageError",
    "cuda_compiled",
    "claims",
    "dedup",
    "default_model_dir",
    "embed",
    "eval",
    "retrieve",
    "score",
]
