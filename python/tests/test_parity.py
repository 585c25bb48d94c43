"""The Python API gives the CLI's results on the demo corpus: search, score, retrieve, embed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import novelty
from conftest import IDEAS, read_jsonl, run_cli


def idea_texts(ideas: list[dict]) -> list[str]:
    return [novelty._core.embedding_text(i.get("title", ""), i.get("text", "")) for i in ideas]


def test_embed_matches_cli(tmp_path: Path, ideas: list[dict]) -> None:
    out = tmp_path / "ideas.npy"
    run_cli("embed", "--in", str(IDEAS), "--out", str(out), "-q")
    assert np.array_equal(novelty.embed(idea_texts(ideas)), np.load(out))


def test_search_matches_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    out = tmp_path / "hits.npz"
    run_cli("search", "--corpus", demo_dir, "--queries", str(IDEAS), "--k", "10", "--cutoff", "2018",
            "--device", "cpu", "--out", str(out), "-q")
    cli = np.load(out)
    # An idea's own "date" is its cutoff; the rest get --cutoff.
    cutoffs = [i.get("date") or "2018" for i in ideas]
    result = index.search(novelty.embed(idea_texts(ideas)), k=10, cutoffs=cutoffs)
    assert result.similarities.dtype == np.float32 and result.rows.dtype == np.int64
    assert np.array_equal(result.rows, cli["rows"])
    assert np.array_equal(result.similarities, cli["sims"])
    assert [list(r) for r in result.ids] == [[x for x in row if x] for row in cli["ids"].tolist()]


def test_score_matches_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    out = tmp_path / "scores.jsonl"
    run_cli("score", "--corpus", demo_dir, "--ideas", str(IDEAS), "--device", "cpu", "--out", str(out), "-q")
    assert novelty.score(index, ideas) == read_jsonl(out)


def test_score_options_match_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    out = tmp_path / "scores.jsonl"
    first = novelty.score(index, ideas[:1])[0]["neighbors"][0]["id"]
    run_cli("score", "--corpus", demo_dir, "--ideas", str(IDEAS), "--device", "cpu", "--out", str(out), "-q",
            "--p", "20", "--q", "10", "--split", "2020", "--cutoff", "2023", "--exclude", first,
            "--methods", "rnd,hd,on,density,density_p,rnd_euclid,rel_hd,rnd_hd")
    mine = novelty.score(index, ideas, p=20, q=10, split="2020", cutoff="2023", exclude=[first],
                         methods=["rnd", "hd", "on", "density", "density_p", "rnd_euclid", "rel_hd", "rnd_hd"])
    assert mine == read_jsonl(out)


def test_score_of_an_array_matches_cli_npy(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    vectors = novelty.embed(idea_texts(ideas))
    npy, out = tmp_path / "ideas.npy", tmp_path / "scores.jsonl"
    np.save(npy, vectors)
    run_cli("score", "--corpus", demo_dir, "--ideas", str(npy), "--device", "cpu", "--out", str(out), "-q")
    assert novelty.score(index, vectors) == read_jsonl(out)


def test_retrieve_matches_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    out = tmp_path / "run.jsonl"
    run_cli("retrieve", "--corpus", demo_dir, "--queries", str(IDEAS), "--k", "5", "--cutoff", "2022",
            "--device", "cpu", "--out", str(out), "-q")
    mine = novelty.retrieve(index, ideas, k=5, cutoff="2022", methods=["dense", "bm25", "hybrid"])
    assert json.loads(json.dumps(mine)) == read_jsonl(out)


def test_auroc(demo_dir: str) -> None:
    assert novelty.eval.auroc([0.1, 0.5, 0.5, 0.9], [0, 0, 1, 1])["auroc"] == pytest.approx(0.875)
    with pytest.raises(ValueError, match="all 1 scored ideas are labelled 0 .*1 more are missing"):
        novelty.eval.auroc([0.1, float("nan")], [0, 0])
    with pytest.raises(ValueError):
        novelty.eval.auroc([0.1], [2])


def test_claims_match_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    proposals = ideas[:2]
    found = index.search(novelty.embed(idea_texts(proposals)), k=15)
    pool = sorted({i for ids in found.ids for i in ids})
    (tmp_path / "props.jsonl").write_text("".join(json.dumps(p) + "\n" for p in proposals), encoding="utf-8")
    (tmp_path / "pool.txt").write_text("".join(i + "\n" for i in pool), encoding="utf-8")
    out = tmp_path / "claims.jsonl"
    run_cli("claims", "--corpus", demo_dir, "--proposals", str(tmp_path / "props.jsonl"), "--pool",
            str(tmp_path / "pool.txt"), "--out", str(out), "-q")
    stages: list[str] = []
    mine = novelty.claims(demo_dir, proposals, pool=pool, progress=lambda stage, done, total: stages.append(stage))
    assert mine == read_jsonl(out)
    assert stages[-1] == "proposals"
    with pytest.raises(ValueError):
        novelty.claims(demo_dir, [{"id": "x"}], pool=pool)
