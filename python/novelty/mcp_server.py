"""`novelty mcp`: the engine as a Model Context Protocol server (docs/integrations.md), built on the
MCP Python SDK (the PyPI package `mcp`). Tools: search_papers, get_paper, score_ideas,
check_claims, find_duplicates, each with a typed input schema, a structured result and a short
text; an engine error is a tool error carrying the engine's message.

    python -m novelty.mcp_server --corpus DIR [--device auto|cpu|cuda] [--http HOST:PORT]
                                 [--llm offline|URL|env] [--llm-model M] [--llm-key K] [--judge J]

stdio by default (an agent starts it as a subprocess); --http serves the SDK's streamable HTTP
transport at http://HOST:PORT/mcp instead."""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import time
from typing import Annotated, Any, Callable, Literal

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import BaseModel, ConfigDict, Field
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        f"novelty mcp needs the MCP Python SDK ({e}): install it with `pip install 'novelty[mcp]'` "
        "(or scripts/setup.sh in a checkout)"
    ) from e

from . import _core
from ._index import Index
from .mcp_tools import NoveltyTools

Date = Annotated[str, Field(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$", description="YYYY, YYYY-MM or YYYY-MM-DD")]


class PaperFilters(BaseModel):
    """Metadata a paper must match, every part given (the engine's metadata filter, the CLI's
    --field, --venue, --min-citations and --papers)."""

    model_config = ConfigDict(extra="forbid")
    field: list[str] | None = Field(None, description="the paper's field is one of these (exact)")
    venue: list[str] | None = Field(None, description="the paper's venue is one of these (exact)")
    min_citations: int | None = Field(None, ge=0, description="at least this many citations (papers without a count fail)")
    papers: list[str] | None = Field(None, description="only these papers (corpus ids)")


class Idea(BaseModel):
    """A research idea or a query record: its text, an optional id and cutoff date."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(None, description="the idea's id (default idea-1, idea-2, ... in order)")
    title: str = Field("", description="a title; embedded with the text")
    text: str = Field("", description="the idea's text (an abstract, a paragraph)")
    date: Date | None = Field(None, description="only papers published on or before this date count")


class SearchHit(BaseModel):
    id: str
    row: int
    rank: int
    score: float
    title: str
    date: str | None
    venue: str
    field: str
    citations: int | None


class SearchOutput(BaseModel):
    query: str
    method: str
    cutoff: str | None
    searchable: int = Field(description="papers that the cutoff and filters left to search")
    results: list[SearchHit] = Field(description="best first; ties by lower row")


class PaperOutput(BaseModel):
    row: int
    id: str
    title: str
    abstract: str
    date: str | None
    field: str
    venue: str
    citations: int | None
    extra: dict[str, Any] = Field(description="the import's other keys (authors, external ids, ...)")


class ScoreOutput(BaseModel):
    results: list[dict[str, Any]] = Field(
        description="per idea, in order, the record of `novelty score`: id, scores {rnd, hd}, nd, neighbors "
                    "(nearest first: id, row, sim, title), provenance")


class ClaimsOutput(BaseModel):
    record: dict[str, Any] = Field(description="the record of `novelty claims`: novelty, claims (the profile), "
                                               "verdict (decision, source), signals, approximate, stages")
    source_paper: dict[str, Any] | None = Field(description="the verdict's source paper: id, title, date")
    mode: str = Field(description="'LLM', or the offline approximation's label")


class DuplicatesOutput(BaseModel):
    threshold: float
    clusters: list[dict[str, Any]] = Field(
        description="the records of `novelty dedup --against CORPUS`: cluster, representative, size, members "
                    "[{id, line, sim, mean_sim, empty?, archive: {id, sim} or null}]")


def _result(run: Callable[[], tuple[dict[str, Any], str]]) -> CallToolResult:
    """The tool's structured result and text; an engine error becomes a tool error with its message."""
    try:
        structured, text = run()
    except (_core.NoveltyError, ValueError, FileNotFoundError) as e:
        raise ToolError(str(e)) from e
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def build_server(tools: NoveltyTools) -> MCPServer:
    """The MCP server publishing `tools`."""
    server = MCPServer(
        name="novelty",
        instructions=(f"Literature search and novelty scoring over the local paper corpus {tools.index.corpus.dir} "
                      f"({tools.index.corpus.size} papers). Dates are YYYY, YYYY-MM or YYYY-MM-DD cutoffs."),
        log_level="WARNING",
    )

    @server.tool(annotations=READ_ONLY)
    def search_papers(
        query: Annotated[str, Field(description="the question, keywords or an abstract")],
        k: Annotated[int, Field(ge=1, le=100, description="results to return")] = 10,
        cutoff: Annotated[Date | None, Field(description="only papers published on or before this date")] = None,
        method: Annotated[Literal["hybrid", "dense", "bm25"],
                          Field(description="hybrid (BM25 and dense fused), dense (embedding cosine) or bm25")] = "hybrid",
        filters: Annotated[PaperFilters | None, Field(description="metadata the papers must match")] = None,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Searches the corpus's papers for a query under a date cutoff and metadata filters."""
        f = filters.model_dump(exclude_none=True) if filters else None
        return _result(lambda: tools.search_papers(query, k, cutoff, method, f))

    @server.tool(annotations=READ_ONLY)
    def get_paper(id: Annotated[str, Field(description="the paper's corpus id")]) -> Annotated[CallToolResult, PaperOutput]:
        """One paper's metadata: title, abstract, date, venue, field, citations and the rest."""
        return _result(lambda: tools.get_paper(id))

    @server.tool(annotations=READ_ONLY)
    def score_ideas(
        ideas: Annotated[list[Idea], Field(min_length=1, max_length=1000, description="the ideas to score")],
        p: Annotated[int, Field(ge=1, le=2048, description="neighbours for HD")] = 100,
        q: Annotated[int, Field(ge=1, le=2048, description="neighbours for the densities of RND")] = 50,
        evidence: Annotated[int, Field(ge=0, le=100, description="nearest papers listed per idea")] = 5,
    ) -> Annotated[CallToolResult, ScoreOutput]:
        """Novelty scores of ideas against the corpus: RND (0-100, higher is more novel), HD, and the
        nearest papers as evidence."""
        return _result(lambda: tools.score_ideas([i.model_dump() for i in ideas], p, q, evidence))

    @server.tool(annotations=READ_ONLY)
    def check_claims(
        proposal: Annotated[Idea, Field(description="the proposal (title and text)")],
        cutoff: Annotated[Date | None, Field(description="only papers published on or before this date")] = None,
        pool: Annotated[list[str] | None, Field(min_length=1, description="the candidate papers (corpus ids, such as "
                                                "search_papers' results); default every corpus paper within the cutoff")] = None,
    ) -> Annotated[CallToolResult, ClaimsOutput]:
        """ClaimNov: splits a proposal into claims, finds for each the papers of the pool that
        anticipate it, and decides whether an earlier paper already holds the whole idea (its source
        paper). A pool of the nearest papers (search_papers) is much faster than the whole corpus."""
        return _result(lambda: tools.check_claims(proposal.model_dump(), cutoff, pool))

    @server.tool(annotations=READ_ONLY)
    def find_duplicates(
        ideas: Annotated[list[Idea], Field(min_length=1, max_length=10000, description="the ideas to compare")],
        threshold: Annotated[float, Field(ge=-1, le=1, description="cosine at or above which two are duplicates")] = 0.8,
    ) -> Annotated[CallToolResult, DuplicatesOutput]:
        """Groups near-duplicate ideas and marks ideas that repeat a corpus paper."""
        return _result(lambda: tools.find_duplicates([i.model_dump() for i in ideas], threshold))

    return server


def _claims_settings(args: argparse.Namespace) -> dict[str, Any]:
    settings: dict[str, Any] = {"llm": args.llm}
    for key in ("llm_model", "llm_key", "judge"):
        if getattr(args, key):
            settings[key] = getattr(args, key)
    return settings


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"--http wants HOST:PORT (such as 127.0.0.1:8765), not '{text}'")
    return host.strip("[]"), int(port)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="novelty mcp", description="The novelty engine as an MCP server.")
    parser.add_argument("--corpus", required=True, help="the corpus directory")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "cuda-emulated"], help="the search backend")
    parser.add_argument("--http", type=_host_port, metavar="HOST:PORT",
                        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--llm", default="offline", help="check_claims: offline, an OpenAI-compatible URL, or env")
    parser.add_argument("--llm-model", default="", help="check_claims: the LLM's model")
    parser.add_argument("--llm-key", default="", help="check_claims: the LLM's API key")
    parser.add_argument("--judge", default="", help="check_claims: the judge (rule, llm or a URL)")
    return parser.parse_args(argv)


def _end_with_the_client() -> None:
    """stdio: the client closing the server's input ends the session (MCP's shutdown). The SDK
    notices only between calls, and a tool call under way (the engine's work, which holds the
    interpreter and cannot be interrupted) would keep the process computing for nobody, for
    minutes on a big pool. So a small watcher process, forked before the server starts, waits
    for the input to be hung up and, unless the server has ended by itself 2 s later, ends it with
    SIGTERM (its default action: the server writes nothing that a sudden end could leave half
    done)."""
    try:
        fd = sys.stdin.fileno()
        if os.isatty(fd):
            return
    except (OSError, ValueError):
        return
    server = os.getpid()
    if os.fork() != 0:
        return
    try:  # the watcher: only the server's input, never its output
        os.close(1)
        os.close(2)
        poller = select.poll()
        poller.register(fd, select.POLLHUP)  # (POLLIN is not asked for: no busy loop)
        while not any(e & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, e in poller.poll()):
            pass
        for _ in range(40):  # a grace of 2 s to end by itself, as it does between calls
            if os.getppid() != server:
                return
            time.sleep(0.05)
        os.kill(server, signal.SIGTERM)
    finally:
        os._exit(0)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        index = Index(args.corpus, args.device)
    except (_core.NoveltyError, ValueError, FileNotFoundError) as e:
        print(f"novelty: error: {e}", file=sys.stderr)
        return 4 if isinstance(e, (_core.CorpusError, FileNotFoundError)) else 2
    server = build_server(NoveltyTools(index, _claims_settings(args)))
    if args.http:
        host, port = args.http
        server.run("streamable-http", host=host, port=port, streamable_http_path="/mcp")
    else:
        _end_with_the_client()
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
