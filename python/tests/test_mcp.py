"""`novelty mcp` through the MCP SDK's own client over stdio: the tools are listed with typed
schemas, each answers on the demo corpus what the Python API gives, and engine errors are tool
errors carrying the engine's message. One test goes over the streamable HTTP transport."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import novelty

from conftest import CLI, without_paths

TOOLS = {"search_papers", "get_paper", "score_ideas", "check_claims", "find_duplicates"}


@asynccontextmanager
async def session(demo_dir: str, *extra: str) -> AsyncIterator[ClientSession]:
    # The SDK's client hands the server only a few variables of its environment (PATH, HOME, ...)
    # unless given more: with all of them the server's numerics (OPENBLAS_* settings) are this
    # process's, and its results compare bit for bit.
    params = StdioServerParameters(command=str(CLI), args=["mcp", "--corpus", demo_dir, "--device", "cpu", *extra],
                                   env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            yield s


def calls(demo_dir: str, requests: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The results of the tool calls, in order, from one server."""

    async def run() -> list[Any]:
        async with session(demo_dir) as s:
            return [await s.call_tool(name, args) for name, args in requests]

    return anyio.run(run)


def plain(value: Any) -> Any:
    """What a value looks like after a trip through JSON (as a tool's result makes)."""
    return json.loads(json.dumps(value))


def idea_records(ideas: list[dict]) -> list[dict]:
    return [{"id": i["id"], "title": i.get("title", ""), "text": i.get("text", "")} for i in ideas]


def test_the_tools_are_listed_with_typed_schemas(demo_dir: str) -> None:
    async def run() -> Any:
        async with session(demo_dir) as s:
            return await s.list_tools()

    tools = {t.name: t for t in anyio.run(run).tools}
    assert set(tools) == TOOLS
    search = tools["search_papers"].input_schema
    assert search["required"] == ["query"]
    assert set(search["properties"]) == {"query", "k", "cutoff", "method", "filters"}
    assert json.dumps(search).count('"hybrid"') >= 1 and '"bm25"' in json.dumps(search)
    assert tools["score_ideas"].input_schema["required"] == ["ideas"]
    assert tools["find_duplicates"].input_schema["properties"]["threshold"]["maximum"] == 1
    for tool in tools.values():
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert tool.description


def test_each_tool_answers_what_the_python_api_gives(demo_dir: str, index: novelty.Index, ideas: list[dict]) -> None:
    corpus = index.corpus
    paper_id = corpus.paper(3)["id"]
    query = ideas[0]["title"]
    pool = sorted(set(index.search(novelty.embed([query]), k=15).ids[0]))
    results = calls(demo_dir, [
        ("search_papers", {"query": query, "k": 5, "cutoff": "2022", "method": "hybrid"}),
        ("search_papers", {"query": query, "k": 3, "method": "bm25"}),
        ("get_paper", {"id": paper_id}),
        ("score_ideas", {"ideas": idea_records(ideas[:3]), "p": 60, "q": 20, "evidence": 4}),
        ("check_claims", {"proposal": idea_records(ideas[:1])[0], "pool": pool}),
        ("find_duplicates", {"ideas": idea_records(ideas) + [dict(idea_records(ideas[:1])[0], id="again")],
                             "threshold": 0.8}),
    ])
    for r in results:
        assert not r.is_error, r.content
        assert r.content and r.content[0].type == "text" and r.content[0].text

    hybrid, bm25, paper, scored, claimed, dupes = (r.structured_content for r in results)
    want = novelty.retrieve(index, [{"id": "novelty-mcp:query", "text": query}], k=5, cutoff="2022",
                            methods=["hybrid"])[0]
    assert [{k: h[k] for k in ("id", "row", "rank", "score", "title")} for h in hybrid["results"]] == plain(
        want["results"]["hybrid"])
    assert hybrid["cutoff"] == want["cutoff"] and hybrid["searchable"] == want["searchable"]
    assert all(h["date"] is None or h["date"] <= "2022-12-31" for h in hybrid["results"])
    assert hybrid["results"][0]["date"] == corpus.paper(hybrid["results"][0]["row"])["date"]
    assert [h["id"] for h in bm25["results"]] == [
        r["id"] for r in novelty.retrieve(index, [{"id": "novelty-mcp:query", "text": query}], k=3,
                                          methods=["bm25"])[0]["results"]["bm25"]]

    expected_paper = dict(corpus.paper(3))
    extra = expected_paper.pop("extra_json")
    assert paper == plain(dict(expected_paper, extra=json.loads(extra) if extra else {}))

    assert without_paths(scored["results"]) == without_paths(plain(novelty.score(
        index, idea_records(ideas[:3]), p=60, q=20, methods=("rnd", "hd"), evidence=4)))
    assert all(set(r["scores"]) == {"rnd", "hd"} and len(r["neighbors"]) == 4 for r in scored["results"])

    record = novelty.claims(demo_dir, idea_records(ideas[:1]), pool=pool)[0]
    assert claimed["record"] == plain(record)
    assert record["approximate"] and "offline approximation" in claimed["mode"]
    source = record["verdict"]["source"]
    assert (claimed["source_paper"] or {}).get("id") == source

    expected = novelty.dedup(index, idea_records(ideas) + [dict(idea_records(ideas[:1])[0], id="again")],
                             threshold=0.8, against_corpus=True)
    assert dupes["clusters"] == plain(expected)
    assert any(c["size"] == 2 for c in dupes["clusters"])


def test_engine_errors_are_tool_errors_with_the_engine_message(demo_dir: str) -> None:
    results = calls(demo_dir, [
        ("get_paper", {"id": "no-such-paper"}),
        ("search_papers", {"query": "graph neural networks", "cutoff": "2020-13"}),
        ("score_ideas", {"ideas": [{"id": "empty"}]}),
        ("score_ideas", {"ideas": [{"text": "x"}], "p": 5000}),
        ("search_papers", {"query": "   "}),
        ("search_papers", {"query": "splatting", "filters": {"field": [""]}}),
    ])
    assert all(r.is_error for r in results), [r.content for r in results]
    texts = [r.content[0].text for r in results]
    assert "no paper with id 'no-such-paper'" in texts[0]
    assert "2020-13" in texts[1]
    assert "has no text and is not the id of a corpus paper" in texts[2]
    assert "p" in texts[3] and "2048" in texts[3]
    assert "query is empty" in texts[4]
    assert "'filter.field' holds an empty name" in texts[5]


def test_search_papers_filters_through_the_request_layer(demo_dir: str) -> None:
    [filtered] = calls(demo_dir, [("search_papers", {"query": "splatting", "filters": {"field": ["biomed"]}})])
    assert not filtered.is_error, filtered.content
    results = filtered.structured_content["results"]
    assert results and all(r["field"] == "biomed" for r in results)
    expected = novelty.retrieve(demo_dir, [{"id": "q", "text": "splatting"}], k=10, methods=["hybrid"],
                                filter={"field": ["biomed"]})[0]["results"]["hybrid"]
    assert [r["id"] for r in results] == [r["id"] for r in expected]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http(demo_dir: str, corpus: novelty.Corpus) -> None:
    port = free_port()
    server = subprocess.Popen([str(CLI), "mcp", "--corpus", demo_dir, "--device", "cpu", "--http", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # until it listens (a bounded wait, not a timing assertion)
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            time.sleep(0.1)

        async def run() -> Any:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, *_):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    listed = await s.list_tools()
                    return listed, await s.call_tool("get_paper", {"id": corpus.paper(0)["id"]})

        listed, got = anyio.run(run)
        assert {t.name for t in listed.tools} == TOOLS
        assert got.structured_content["title"] == corpus.paper(0)["title"]
    finally:
        server.terminate()
        server.wait(timeout=60)


def test_a_corpus_that_is_not_there(tmp_path: Any) -> None:
    done = subprocess.run([str(CLI), "mcp", "--corpus", str(tmp_path / "none")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 4 and "no such corpus directory" in done.stderr
