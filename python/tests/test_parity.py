"""The Python API gives the CLI's results on the demo corpus: search, score, retrieve, embed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import novelty
from conftest import IDEAS, read_jsonl, run_cli, without_paths


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
    assert without_paths(novelty.score(index, ideas)) == without_paths(read_jsonl(out))


def test_score_options_match_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    out = tmp_path / "scores.jsonl"
    first = novelty.score(index, ideas[:1])[0]["neighbors"][0]["id"]
    run_cli("score", "--corpus", demo_dir, "--ideas", str(IDEAS), "--device", "cpu", "--out", str(out), "-q",
            "--p", "20", "--q", "10", "--split", "2020", "--cutoff", "2023", "--exclude", first,
            "--methods", "rnd,hd,on,density,density_p,rnd_euclid,rel_hd,rnd_hd")
    mine = novelty.score(index, ideas, p=20, q=10, split="2020", cutoff="2023", exclude=[first],
                         methods=["rnd", "hd", "on", "density", "density_p", "rnd_euclid", "rel_hd", "rnd_hd"])
    assert without_paths(mine) == without_paths(read_jsonl(out))


def test_every_density_path_gives_the_same_scores_and_says_which(index: novelty.Index, ideas: list[dict]) -> None:
    runs = {d: novelty.score(index, ideas, p=30, q=12, densities=d) for d in ("self-join", "on-demand", "auto")}
    assert without_paths(runs["auto"]) == without_paths(runs["self-join"]) == without_paths(runs["on-demand"])
    assert {r["provenance"]["densities_path"] for r in runs["self-join"]} == {"self-join"}
    assert {r["provenance"]["densities_path"] for r in runs["auto"]} == {"store"}  # the on-demand call stored them
    with pytest.raises(ValueError, match="densities"):
        novelty.score(index, ideas[:1], densities="fast")


def test_score_of_an_array_matches_cli_npy(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    vectors = novelty.embed(idea_texts(ideas))
    npy, out = tmp_path / "ideas.npy", tmp_path / "scores.jsonl"
    np.save(npy, vectors)
    run_cli("score", "--corpus", demo_dir, "--ideas", str(npy), "--device", "cpu", "--out", str(out), "-q")
    assert without_paths(novelty.score(index, vectors)) == without_paths(read_jsonl(out))


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
    assert without_paths(mine) == without_paths(read_jsonl(out))
    assert stages[-1] == "proposals"
    with pytest.raises(ValueError):
        novelty.claims(demo_dir, [{"id": "x"}], pool=pool)


def filtered_ideas(ideas: list[dict]) -> list[dict]:
    """The demo ideas, every other one with a metadata filter of its own."""
    return [dict(idea, filter={"min_citations": 5}) if i % 2 else dict(idea) for i, idea in enumerate(ideas)]


def test_metadata_filters_match_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    """filter= of Index.search, score and retrieve is the CLI's --field, --min-citations and
    --papers, applied with each record's own "filter", through the same request layer."""
    mine_ideas = filtered_ideas(ideas)
    ideas_file = tmp_path / "ideas.jsonl"
    ideas_file.write_text("".join(json.dumps(i) + "\n" for i in mine_ideas), encoding="utf-8")
    papers = [index.corpus.paper(row)["id"] for row in range(0, index.corpus._c.size, 3)]  # a third of each field
    papers_file = tmp_path / "papers.txt"
    papers_file.write_text("\n".join(papers) + "\n", encoding="utf-8")
    flags = ["--field", "biomed", "--papers", str(papers_file)]
    flt = {"field": "biomed", "papers": papers}

    hits = tmp_path / "hits.npz"
    run_cli("search", "--corpus", demo_dir, "--queries", str(ideas_file), "--k", "10", "--device", "cpu",
            "--out", str(hits), "-q", *flags)
    cli = np.load(hits)
    vectors = novelty.embed(idea_texts(ideas))
    # Index.search takes one filter for every query: compare the queries without their own.
    plain = [i for i, idea in enumerate(mine_ideas) if "filter" not in idea]
    result = index.search(vectors[plain], k=10, cutoffs=[ideas[i].get("date") for i in plain], filter=flt)
    assert np.array_equal(result.rows, cli["rows"][plain])
    assert np.array_equal(result.similarities, cli["sims"][plain])
    allowed = {corpus_row for corpus_row in result.rows.ravel().tolist() if corpus_row >= 0}
    assert allowed and all(index.corpus.paper(r)["field"] == "biomed" and index.corpus.paper(r)["id"] in papers
                           for r in allowed)

    scores = tmp_path / "scores.jsonl"
    run_cli("score", "--corpus", demo_dir, "--ideas", str(ideas_file), "--device", "cpu", "--p", "5", "--q", "5",
            "--out", str(scores), "-q", "--field", "biomed")
    assert without_paths(novelty.score(index, mine_ideas, p=5, q=5, filter={"field": "biomed"})) == without_paths(
        read_jsonl(scores))

    run = tmp_path / "run.jsonl"
    run_cli("retrieve", "--corpus", demo_dir, "--queries", str(ideas_file), "--k", "5", "--device", "cpu",
            "--out", str(run), "-q", *flags)
    mine = novelty.retrieve(index, mine_ideas, k=5, methods=["dense", "bm25", "hybrid"], filter=flt)
    assert json.loads(json.dumps(mine)) == read_jsonl(run)
