"""novelty.retrieve with query rewriting (expand, hyde) gives the CLI's records for the same
rewriting: through the project's fake OpenAI-compatible server (tests/fake_llm_server.hpp, built as
bench/fake_llm), from a rewrites file, and with an unreachable LLM."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

import novelty
from conftest import BUILD, CLI, read_jsonl

FAKE_LLM = BUILD / "bench" / "fake_llm"
UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
METHODS = ["dense", "bm25", "hybrid"]


@pytest.fixture(autouse=True)
def no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NOVELTY_LLM_BASE_URL", "NOVELTY_LLM_MODEL", "NOVELTY_LLM_API_KEY", "OPENAI_API_KEY",
                 "NOVELTY_LLM_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[str]:
    assert FAKE_LLM.exists(), f"{FAKE_LLM} is missing: build with the bench drivers (NOVELTY_BENCH=ON, the default)"
    server = subprocess.Popen([str(FAKE_LLM)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def queries(tmp_path_factory: pytest.TempPathFactory, ideas: list[dict]) -> tuple[Path, list[dict]]:
    chosen = ideas[:4]
    path = tmp_path_factory.mktemp("queries") / "queries.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in chosen), encoding="utf-8")
    return path, chosen


def timeless(text: str) -> str:
    """A transport error without its timing ("after 44 ms"), which differs from call to call."""
    return re.sub(r"after \d+ ms", "after N ms", text)


def timeless_records(records: list[dict]) -> list[dict]:
    return json.loads(timeless(json.dumps(records)))


def cli_retrieve(tmp_path: Path, demo_dir: str, queries: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    out = tmp_path / "cli.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOVELTY_LLM") and k != "OPENAI_API_KEY"}
    return subprocess.run([str(CLI), "retrieve", "--corpus", demo_dir, "--queries", str(queries), "--k", "5",
                           "--cutoff", "2022", "--methods", ",".join(METHODS), "--device", "cpu", "--cache", "none",
                           "-q", "--jsonl", str(out), *flags], capture_output=True, text=True, timeout=300, env=env)


def cli_records(tmp_path: Path, demo_dir: str, queries: Path, *flags: str) -> list[dict]:
    done = cli_retrieve(tmp_path, demo_dir, queries, *flags)
    assert done.returncode == 0, done.stderr
    return read_jsonl(tmp_path / "cli.jsonl")


def test_llm_expansion_and_hyde_match_the_cli(tmp_path: Path, demo_dir: str, index: novelty.Index,
                                              queries: tuple[Path, list[dict]], fake_llm: str) -> None:
    path, chosen = queries
    cli = cli_records(tmp_path, demo_dir, path, "--expand", "2", "--hyde", "2", "--llm", fake_llm,
                      "--llm-model", "fake-model")
    mine = novelty.retrieve(index, chosen, k=5, cutoff="2022", methods=METHODS, expand=2, hyde=2,
                            llm=novelty.LLMSettings(fake_llm, model="fake-model"))
    assert json.loads(json.dumps(mine)) == cli
    # The LLM's rewrites were used: two of each per query, no failure, and they changed rankings.
    for record in mine:
        assert len(record["rewrites"]["expand"]) == 2 and len(record["rewrites"]["hyde"]) == 2
        assert "rewrite_errors" not in record and record["expand_mode"] == "multi"
        assert set(record["results"]) == {m + s for s in ("", "+expand", "+hyde") for m in METHODS}
    assert any(r["results"]["dense+hyde"] != r["results"]["dense"] for r in mine)

    # Fed back as a rewrites file, the CLI's records give the same records without an LLM.
    again = novelty.retrieve(index, chosen, k=5, cutoff="2022", methods=METHODS, expand=2, hyde=2,
                             rewrites=tmp_path / "cli.jsonl")
    assert again == mine


def test_single_query_expansion_with_the_original_matches_the_cli(
    tmp_path: Path, demo_dir: str, index: novelty.Index, queries: tuple[Path, list[dict]], fake_llm: str
) -> None:
    path, chosen = queries
    cli = cli_records(tmp_path, demo_dir, path, "--expand", "1", "--expand-mode", "single", "--fuse-original",
                      "--llm", fake_llm, "--llm-model", "fake-model")
    mine = novelty.retrieve(index, chosen, k=5, cutoff="2022", methods=METHODS, expand=1, expand_mode="single",
                            fuse_original=True, llm=novelty.LLMSettings(fake_llm, model="fake-model"))
    assert json.loads(json.dumps(mine)) == cli
    assert mine[0]["expand_mode"] == "single" and mine[0]["fuse_original"] is True
    assert mine[0]["rewrites"]["expand"][0].startswith("Related methods")


def test_an_unreachable_llm_fails_as_in_the_cli(tmp_path: Path, demo_dir: str, index: novelty.Index,
                                                queries: tuple[Path, list[dict]]) -> None:
    path, chosen = queries
    # No model named: the client asks the server's /models and cannot; the CLI's message, a UsageError.
    done = cli_retrieve(tmp_path, demo_dir, path, "--hyde", "1", "--llm", UNREACHABLE, "--retries", "0")
    assert done.returncode == 2
    with pytest.raises(novelty.UsageError) as raised:
        novelty.retrieve(index, chosen, k=5, cutoff="2022", methods=METHODS, hyde=1,
                         llm=novelty.LLMSettings(UNREACHABLE, retries=0))
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, novelty.NoveltyError)
    assert f"novelty: error: {timeless(str(raised.value))}" in timeless(done.stderr), (str(raised.value), done.stderr)
    assert "--llm-model" in str(raised.value)

    # A model named: every call fails, each query ranks its own text and its record says why.
    cli = cli_records(tmp_path, demo_dir, path, "--hyde", "1", "--llm", UNREACHABLE, "--llm-model", "m",
                      "--retries", "0", "--timeout", "5")
    mine = novelty.retrieve(index, chosen, k=5, cutoff="2022", methods=METHODS, hyde=1,
                            llm=novelty.LLMSettings(UNREACHABLE, model="m", retries=0, timeout=5))
    assert timeless_records(mine) == timeless_records(cli)
    for record in mine:
        assert record["rewrites"]["hyde"] == [] and UNREACHABLE.split("/v1")[0] in record["rewrite_errors"]["hyde"]
        # The fusion of the query's own ranking alone: the same papers in the same order.
        assert [r["id"] for r in record["results"]["bm25+hyde"]] == [r["id"] for r in record["results"]["bm25"]]


def test_bad_rewriting_arguments_raise(tmp_path: Path, index: novelty.Index, ideas: list[dict]) -> None:
    one = ideas[:1]
    with pytest.raises(novelty.UsageError, match="need rewrites"):
        novelty.retrieve(index, one, methods=["bm25"], expand=2)
    with pytest.raises(novelty.UsageError, match="go with expand"):
        novelty.retrieve(index, one, methods=["bm25"], llm=UNREACHABLE)
    with pytest.raises(novelty.UsageError, match="alternatives"):
        novelty.retrieve(index, one, methods=["bm25"], hyde=1, llm=UNREACHABLE, rewrites=tmp_path)
    with pytest.raises(novelty.UsageError, match="multi or single"):
        novelty.retrieve(index, one, methods=["bm25"], expand=1, expand_mode="both", llm=UNREACHABLE)
    with pytest.raises(novelty.UsageError, match="number of expansions must be 1"):
        novelty.retrieve(index, one, methods=["bm25"], expand=3, expand_mode="single", llm=UNREACHABLE)
    with pytest.raises(TypeError, match="LLMSettings"):
        novelty.retrieve(index, one, methods=["bm25"], hyde=1, llm=8000)
    with pytest.raises(FileNotFoundError):
        novelty.retrieve(index, one, methods=["bm25"], expand=1, rewrites=tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "idea-01", "expand": "not a list"}\n', encoding="utf-8")
    with pytest.raises(novelty.InputError, match=r"bad\.jsonl:1: "):
        novelty.retrieve(index, one, methods=["bm25"], expand=1, rewrites=bad)
