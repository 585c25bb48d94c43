"""novelty.dedup gives the records `novelty dedup --against CORPUS` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import novelty

from conftest import read_jsonl, run_cli


def duplicated_ideas(corpus: novelty.Corpus, ideas: list[dict]) -> list[dict]:
    """The demo ideas, a near-copy of the first, an idea without text and a corpus paper's text."""
    paper = corpus.paper(7)
    return ideas + [
        {"id": "copy", "title": ideas[0].get("title", ""), "text": ideas[0].get("text", "") + " again"},
        {"id": "blank", "title": " "},
        {"id": "paper-again", "title": paper["title"], "text": paper["abstract"]},
    ]


def test_dedup_matches_the_cli(tmp_path: Path, demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    mine_ideas = duplicated_ideas(index.corpus, ideas)
    path = tmp_path / "ideas.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in mine_ideas), encoding="utf-8")
    out = tmp_path / "clusters.jsonl"
    run_cli("dedup", "--ideas", str(path), "--against", demo_dir, "--threshold", "0.8", "--device", "cpu",
            "--out", str(out), "-q")
    mine = novelty.dedup(index, mine_ideas, threshold=0.8, against_corpus=True)
    assert mine == read_jsonl(out)
    members = {m["id"]: (c, m) for c in mine for m in c["members"]}
    assert members["copy"][0]["cluster"] == members[ideas[0]["id"]][0]["cluster"]
    assert members["blank"][1]["empty"] is True and members["blank"][0]["size"] == 1
    assert members["paper-again"][1]["archive"]["id"] == index.corpus.paper(7)["id"]


def test_dedup_without_the_corpus_and_its_errors(index: novelty.Index, ideas: list[dict]) -> None:
    clusters = novelty.dedup(index, ideas[:3], threshold=1.0, representative="first")
    assert [c["size"] for c in clusters] == [1, 1, 1] and all("archive" not in m for c in clusters for m in c["members"])
    with pytest.raises(novelty.UsageError, match="threshold must be in"):
        novelty.dedup(index, ideas[:2], threshold=1.5)
    with pytest.raises(novelty.InputError, match="repeats"):
        novelty.dedup(index, [ideas[0], ideas[0]])
