"""Arrays in and out: dtypes, strides, the no-copy path, empty inputs and bad input."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import novelty
from conftest import run_cli


@pytest.fixture(scope="module")
def queries(corpus: novelty.Corpus) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.standard_normal((50, corpus.dim)).astype(np.float32)


def test_result_shapes_and_order(index: novelty.Index, queries: np.ndarray) -> None:
    sims, rows, ids = index.search(queries, k=7)
    assert sims.shape == rows.shape == (50, 7) and sims.dtype == np.float32 and rows.dtype == np.int64
    assert sims.flags.c_contiguous and rows.flags.c_contiguous
    assert np.all(np.diff(sims, axis=1) <= 0)
    assert all(len(x) == 7 for x in ids)


def test_float16_queries_search_as_their_float32_values(index: novelty.Index, queries: np.ndarray) -> None:
    half = queries.astype(np.float16)
    a = index.search(half, k=5)
    b = index.search(half.astype(np.float32), k=5)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.similarities, b.similarities)


@pytest.mark.parametrize("layout", ["fortran", "every_other_row", "every_other_column"])
def test_strided_queries_give_the_contiguous_results(index: novelty.Index, queries: np.ndarray, layout: str) -> None:
    if layout == "fortran":
        view, same = np.asfortranarray(queries), queries
    elif layout == "every_other_row":
        view, same = queries[::2], np.ascontiguousarray(queries[::2])
    else:
        wide = np.repeat(queries, 2, axis=1)
        view, same = wide[:, ::2], queries
    assert not view.flags.c_contiguous
    before = novelty._core.query_copies()
    a = index.search(view, k=5)
    assert novelty._core.query_copies() == before + 1
    b = index.search(same, k=5)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.similarities, b.similarities)


def test_float32_queries_reach_the_engine_without_a_copy(index: novelty.Index, corpus: novelty.Corpus) -> None:
    big = np.random.default_rng(1).standard_normal((10_000, corpus.dim)).astype(np.float32)
    assert big.shape == (10_000, 384)
    before = novelty._core.query_copies()
    result = index.search(big, k=3, with_ids=False)
    assert novelty._core.query_copies() == before
    assert novelty._core.last_query_pointer() == big.ctypes.data
    assert result.rows.shape == (10_000, 3)
    assert index._i.last_engine_seconds > 0


def test_one_dimensional_query_is_one_row(index: novelty.Index, queries: np.ndarray) -> None:
    a = index.search(queries[0], k=4)
    b = index.search(queries[:1], k=4)
    assert a.rows.shape == (1, 4) and np.array_equal(a.rows, b.rows)


def test_empty_inputs(index: novelty.Index, corpus: novelty.Corpus, ideas: list[dict]) -> None:
    sims, rows, ids = index.search(np.zeros((0, corpus.dim), np.float32), k=5)
    assert sims.shape == (0, 5) and rows.shape == (0, 5) and ids == []
    assert novelty.score(index, []) == []
    assert novelty.retrieve(index, [], methods=["dense", "bm25"]) == []
    assert novelty.embed([]).shape[0] == 0


def test_cutoff_and_exclude(index: novelty.Index, corpus: novelty.Corpus, queries: np.ndarray) -> None:
    limit = corpus.rows_through("2015")
    result = index.search(queries[:3], k=10, cutoffs=["2015", None, "2015"])
    assert result.rows[0].max() < limit and result.rows[2].max() < limit
    first = result.ids[1][0]
    again = index.search(queries[:3], k=10, exclude=[first])
    assert first not in again.ids[1]


def test_fewer_rows_than_k_are_padded(index: novelty.Index, corpus: novelty.Corpus, queries: np.ndarray) -> None:
    earliest = corpus.paper(0)["date"]
    n = corpus.rows_through(earliest)
    result = index.search(queries[:1], k=n + 3, cutoffs=earliest)
    assert np.all(result.rows[0, n:] == -1) and np.all(np.isneginf(result.similarities[0, n:]))
    assert len(result.ids[0]) == n


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((2, 10), np.float32),          # wrong width
        np.zeros((2, 384), np.int32),           # wrong dtype
        np.zeros((2, 2, 384), np.float32),      # wrong rank
        np.zeros((2, 384), np.float32),         # zero vectors
        np.full((1, 384), np.nan, np.float32),  # NaN
    ],
)
def test_bad_queries_raise_value_error(index: novelty.Index, bad: np.ndarray) -> None:
    with pytest.raises(ValueError):
        index.search(bad, k=3)


def test_bad_arguments(index: novelty.Index, queries: np.ndarray, ideas: list[dict]) -> None:
    with pytest.raises(novelty.UsageError, match="k must be"):
        index.search(queries, k=0)
    with pytest.raises(ValueError):
        index.search(queries, k=3, cutoffs="2018-13")
    with pytest.raises(ValueError, match="unknown method"):
        novelty.score(index, ideas[:1], methods=["nope"])
    with pytest.raises(novelty.UsageError, match=r"ideas\[0\]: missing 'id'"):
        novelty.score(index, [{"title": "no id"}])
    with pytest.raises(ValueError, match="too few|need more than|holds"):
        novelty.score(index, ideas[:1], cutoff="1988")
    with pytest.raises(novelty.UsageError, match=r"ideas\[1\]: .* appears twice \(first as ideas\[0\]\)"):
        novelty.score(index, [ideas[0], ideas[0]])
    with pytest.raises(novelty.UsageError, match=r"ideas\[0\]: 'title' must be a string"):
        novelty.score(index, [{"id": "x", "title": 3}])
    with pytest.raises(novelty.UsageError, match=r"filter: 'filter.min_citations' is negative"):
        index.search(queries, k=3, filter={"min_citations": -1})
    with pytest.raises(novelty.UsageError, match=r"filter: 'filter' has an unknown key 'fields'"):
        novelty.score(index, ideas[:1], filter={"fields": "cs.LG"})


def test_missing_paths_raise_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        novelty.Corpus.open(tmp_path / "nothing")
    with pytest.raises(FileNotFoundError):
        novelty.Corpus.import_([(str(tmp_path / "none.jsonl"), "jsonl")], tmp_path / "out")
    with pytest.raises(FileNotFoundError):
        novelty.Embedder(str(tmp_path / "no-model"))


def test_damaged_corpus_raises_corpus_error(tmp_path: Path, demo_dir: str) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(demo_dir, copy)
    with open(copy / "vectors.npy", "r+b") as f:
        f.truncate(os.path.getsize(copy / "vectors.npy") - 4)
    with pytest.raises(novelty.CorpusError) as caught:
        novelty.Corpus.open(copy)
    assert isinstance(caught.value, novelty.NoveltyError) and "vectors.npy" in str(caught.value)


def test_bad_import_record_names_file_and_line(tmp_path: Path) -> None:
    src = tmp_path / "papers.jsonl"
    src.write_text('{"id": "a", "title": "A paper", "abstract": "x", "date": "2020"}\n{"id": \n', encoding="utf-8")
    with pytest.raises(novelty.InputError, match=r"papers.jsonl:2"):
        novelty.Corpus.import_([(str(src), "jsonl")], tmp_path / "out")


def test_corpus_round_trip(tmp_path: Path, corpus: novelty.Corpus) -> None:
    src = tmp_path / "papers.jsonl"
    src.write_text("".join(f'{{"id": "p{i}", "title": "Paper {i}", "abstract": "about {i}", "date": "20{10 + i}"}}\n'
                           for i in range(6)), encoding="utf-8")
    made = novelty.Corpus.import_([(str(src), "jsonl")], tmp_path / "c")
    assert made.size == 6 and made.info()["count"] == 6 and made.dim == 0
    vectors = np.random.default_rng(3).standard_normal((6, 8)).astype(np.float32)
    made.add_vectors(vectors, ids=[f"p{i}" for i in range(6)], embedder="test-model")
    assert made.dim == 8 and made.embedder == "test-model" and made.vectors().dtype == np.float32
    hit = novelty.Index(made, "cpu").search(vectors[2], k=1)
    assert hit.ids == [["p2"]] and hit.similarities[0, 0] == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(novelty.InputError):
        made.add_vectors(np.zeros((6, 8), np.float32), ids=[f"p{i}" for i in range(6)])


def test_corpus_embed_matches_cli(tmp_path: Path) -> None:
    src = tmp_path / "papers.jsonl"
    src.write_text("".join(f'{{"id": "p{i}", "title": "Graph paper {i}", "abstract": "Nodes and edges {i}.", '
                           f'"date": "20{10 + i}"}}\n' for i in range(5)), encoding="utf-8")
    mine = novelty.Corpus.import_([(str(src), "jsonl")], tmp_path / "mine")
    theirs = novelty.Corpus.import_([(str(src), "jsonl")], tmp_path / "theirs")
    done: list[int] = []
    mine.embed(progress=lambda d, t: done.append(d))
    run_cli("corpus", "embed", theirs.dir, "-q")
    theirs = theirs.reopen()
    assert mine.embedder == theirs.embedder == "all-MiniLM-L6-v2" and done[-1] == 5
    assert np.array_equal(mine.vectors(), theirs.vectors())


def test_progress_callback_is_called(tmp_path: Path, demo_dir: str, ideas: list[dict]) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(demo_dir, copy, ignore=shutil.ignore_patterns("cache*", "*.selfjoin*"))
    calls: list[tuple[int, int]] = []
    index = novelty.Index(str(copy), "cpu")
    novelty.score(index, ideas[:2], q=7, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]
