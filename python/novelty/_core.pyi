"""The novelty engine's compiled core; use the `novelty` package instead."""

from collections.abc import Callable, Sequence, Set
from typing import Annotated

import numpy
from numpy.typing import NDArray

from novelty import (
    CorpusError as CorpusError,
    InputError as InputError,
    NoveltyError as NoveltyError,
    UsageError as UsageError
)


def cuda_compiled() -> bool:
    """True when the CUDA backend is compiled in (a cu13 build)."""

def auto_device() -> str:
    """What device='auto' resolves to here: 'cuda' or 'cpu'."""

def query_copies() -> int:
    """
    How many query arrays were copied before reaching the engine (not float32 or not C-contiguous).
    """

def last_query_pointer() -> int:
    """The address of the last query matrix the engine read."""

class Corpus:
    """An open, read-only corpus directory."""

    @staticmethod
    def open(dir: str) -> Corpus:
        """Opens a corpus directory (checks it against its manifest)."""

    @property
    def dir(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def dim(self) -> int: ...

    @property
    def dtype(self) -> str: ...

    @property
    def has_vectors(self) -> bool: ...

    @property
    def embedder(self) -> str | None: ...

    @property
    def identity(self) -> str: ...

    def vectors(self) -> object:
        """
        The normalised vectors, size x dim, a read-only view of vectors.npy (float32 or float16).
        """

    def paper(self, row: int) -> dict: ...

    def find_row(self, id: str) -> int | None: ...

    def rows_through(self, date: str) -> int:
        """
        Rows published on or before `date` (YYYY, YYYY-MM or YYYY-MM-DD): rows [0, result).
        """

    def ids(self, rows: Sequence[int]) -> list:
        """The ids of the given rows ("" for -1)."""

def import_corpus(sources: Sequence[tuple[str, str, str]], out_dir: str, overwrite: bool = False, skip_invalid: bool = False, progress: object | None = None) -> dict: ...

def add_vectors(dir: str, vectors_path: str, ids_path: str, order: str, dtype: str, embedder: str, pooling: str) -> None: ...

def embed_corpus(dir: str, embedder: Embedder, batch: int = 256, resume: bool = False, dtype: str = 'f32', progress: object | None = None) -> int: ...

def parse_date(text: str, parameter: str) -> tuple[str, str]:
    """Checks a date: (as given, its last day); UsageError when invalid."""

class Embedder:
    """A text encoder: texts in, L2-normalised float32 vectors out."""

    @staticmethod
    def builtin(model_dir: str, name: str = '', threads: int = 0, precision: str = 'auto') -> Embedder:
        """
        The built-in encoder from a sentence-transformers model directory; precision: auto, f32, bf16 or int8 (the CPU encoder's linear layers).
        """

    @staticmethod
    def http(base_url: str, model: str = '', api_key: str = '') -> Embedder:
        """
        An OpenAI-compatible /v1/embeddings server (model and key default to the environment).
        """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def pooling(self) -> str: ...

    @property
    def device(self) -> str: ...

    @property
    def precision(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> NDArray[numpy.float32]:
        """
        Embeds each text: a float32 array of len(texts) x dim, each row L2-normalised.
        """

def embedding_text(title: str, text: str) -> str:
    """
    The text embedded for a record: title, a blank line, text (trimmed; one of them when the other is empty).
    """

class Index:
    """A corpus's vectors loaded into a search backend (cpu or cuda)."""

    def __init__(self, corpus: Corpus, device: str = 'auto', storage: str = '', memory_mib: int = 0, threads: int = 0) -> None: ...

    @property
    def device(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def n_rows(self) -> int: ...

    @property
    def dim(self) -> int: ...

    @property
    def last_engine_seconds(self) -> float:
        """
        Seconds the engine itself spent in the last search (the rest of a call is the binding's).
        """

    def search(self, queries: Annotated[NDArray, dict(device='cpu', writable=False)] | None, k: int, resolved: Resolved | None = None) -> tuple[NDArray[numpy.float32], NDArray[numpy.int64], NDArray[numpy.int64]]:
        """
        Top-k rows per query: (sims float32 n x k, rows int64 n x k, counts int64 n); similarity descending, ties by lower row; slots past counts[i] hold row -1 and similarity -inf.
        """

def score(index: Index, ideas: Resolved, vectors: Annotated[NDArray, dict(device='cpu', writable=False)] | None, p: int, q: int, methods: Set[str], split: str, historical_from: str, include_self: bool, extra: int, evidence: int, progress: object | None = None, densities: str = 'auto') -> list[str]:
    """
    Scores resolved ideas (with `vectors`, an array of one row per idea; else their own); one JSON text per idea, as `novelty score` writes it.
    """

def retrieve(index: Index, embedder: Embedder | None, queries: Resolved, methods: Sequence[str], k: int, fusion_depth: int, expand: int, expand_mode: str, hyde: int, fuse_original: bool, rewrites: str, llm: str, llm_model: str, llm_key: str, concurrency: int, timeout: float, retries: int, max_tokens: int, cache: str) -> list[str]:
    """
    One JSON line per query, as `novelty retrieve --jsonl` writes it: the rankings by tag (each method, then each method with each rewrite mode), best first, and the rewrites used.
    """

def auroc(scores: Sequence[float], labels: Sequence[int]) -> dict:
    """
    AUROC of scores (NaN = missing, left out) against labels (1 novel, 0 not): {auroc (None without both classes), n_pos, n_neg, n_missing, reason}.
    """

class ClaimsChecker:
    """The ClaimNov check over a corpus (one run at a time)."""

    @staticmethod
    def make(corpus_dir: str, embedder: Embedder, llm: str, llm_model: str, llm_key: str, judge: str, judge_model: str, concurrency: int, timeout_seconds: float, retries: int, max_tokens: int, response_cache: str, claims_cache: str, window: int, alpha: float, weights: str, threshold: float) -> ClaimsChecker:
        """
        Takes the embedder's encoder (it embeds claims; it must be the corpus's).
        """

    @property
    def approximate(self) -> bool: ...

    @property
    def stages(self) -> str: ...

    def check(self, body: str, progress: object | None = None) -> str:
        """Runs a POST /v1/claims body; returns the job's result as JSON text."""

class Resolved:
    """Ideas or queries resolved by the request layer against a corpus."""

    @property
    def ids(self) -> list[str]: ...

    @property
    def texts(self) -> list[str]: ...

    @property
    def cutoffs(self) -> list[str]: ...

    @property
    def row_limit(self) -> list[int]: ...

    @property
    def unknown_excluded(self) -> list[int]: ...

    @property
    def n_to_embed(self) -> int: ...

    @property
    def filtered(self) -> bool: ...

    def embed(self, embed: Callable, encoder: str, precision: str = '') -> None:
        """
        Embeds the records whose vector is their text with embed(texts) -> float32 array, 64 at a time; precision: the encoder's (recorded in score provenance as ideas_embedder_precision), "" for none.
        """

    def __len__(self) -> int: ...

def resolve_records(corpus: Corpus, records_json: str, key: str, cutoff: str | None, exclude: Sequence[str], filter_json: str | None, vectors: bool, texts: bool) -> Resolved:
    """
    Records given as a JSON array of objects, resolved as the CLI resolves a query file (problems name key[i]).
    """

def resolve_rows(corpus: Corpus, n: int, cutoffs: Sequence[str | None], excludes: Sequence[Sequence[str]], exclude: Sequence[str], filter_json: str | None) -> Resolved:
    """
    The scopes of n array rows (ids '0'..'n-1'), each with its own cutoff and exclusions when given.
    """

def dedup(index: Index, vectors: Annotated[NDArray, dict(device='cpu', writable=False)], active: Sequence[int], threshold: float, representative: str, first_k: int, against_corpus: bool, progress: object | None = None) -> tuple[list[int], list[float], list[float], list[int], int, list[int], list[float]]:
    """
    Near-duplicate clusters of n idea vectors (active[i] == 0: a singleton never linked): (cluster per idea, sim to representative, mean sim, representative per cluster, extra rounds, closest corpus row per idea or -1, its sim).
    """
