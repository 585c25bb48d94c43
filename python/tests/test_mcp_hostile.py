"""`novelty mcp` under bad calls (issue 48), spoken to as raw JSON-RPC over stdio so that nothing
in a client library smooths them: malformed JSON, requests that are not JSON-RPC, unknown methods
and tools, wrong argument types, huge arguments, many calls in flight at once, and a client that
goes away in the middle of a call (stdio and streamable HTTP). Each gets a clear error (a JSON-RPC
error, or a tool error naming the argument), nothing crashes, and the server answers the next
call."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import time
from typing import Any, Iterator

import pytest

from conftest import CLI

PROTOCOL = "2025-06-18"


class RawMcp:
    """One `novelty mcp` over stdio, spoken to line by line."""

    def __init__(self, demo_dir: str) -> None:
        self.process = subprocess.Popen([str(CLI), "mcp", "--corpus", demo_dir, "--device", "cpu"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=dict(os.environ))
        self.next_id = 1
        self.buffer = b""

    def send_raw(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        sent = self.next_id
        if not notify:
            message["id"] = sent
            self.next_id += 1
        self.send_raw(json.dumps(message).encode())
        return sent

    def receive(self, timeout: float = 120) -> dict[str, Any]:
        """The next message the server writes (a bounded wait: a hang fails here)."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "the server did not answer"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                assert chunk, f"the server closed its output (exit code {self.process.poll()}): {self.stderr()}"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def reply_to(self, request_id: int, timeout: float = 120) -> dict[str, Any]:
        """The response to `request_id` (log notifications in between are skipped)."""
        while True:
            message = self.receive(timeout)
            if message.get("id") == request_id:
                return message

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.reply_to(self.send(method, params))

    def tool(self, name: str, arguments: Any) -> dict[str, Any]:
        return self.call("tools/call", {"name": name, "arguments": arguments})

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read().decode(errors="replace")[-2000:]

    def initialize(self) -> None:
        reply = self.call("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                         "clientInfo": {"name": "hostile-test", "version": "0"}})
        assert "result" in reply, reply
        self.send("notifications/initialized", notify=True)

    def still_answers(self, paper_id: str) -> None:
        reply = self.tool("get_paper", {"id": paper_id})
        assert "result" in reply and not reply["result"].get("isError"), reply
        assert reply["result"]["structuredContent"]["id"] == paper_id
        assert self.process.poll() is None

    def close(self) -> int:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            return -999  # still running a minute after its client left
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.fixture()
def mcp(demo_dir: str) -> Iterator[RawMcp]:
    server = RawMcp(demo_dir)
    try:
        server.initialize()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def paper_id(demo_dir: str) -> str:
    import novelty

    return novelty.Corpus.open(demo_dir).paper(0)["id"]


def tool_error_text(reply: dict[str, Any]) -> str:
    """The message of a tool error (isError) or of a JSON-RPC error."""
    if "error" in reply:
        return reply["error"]["message"]
    result = reply["result"]
    assert result.get("isError"), f"not an error: {reply}"
    return " ".join(c.get("text", "") for c in result["content"])


def test_malformed_json_and_non_json_rpc_get_errors_and_the_server_goes_on(mcp: RawMcp, paper_id: str) -> None:
    for line in [b"{not json", b"[1, 2", b"\xff\xfe garbage", b"{}", b'{"jsonrpc": "2.0"}', b'"just a string"',
                 b'{"jsonrpc": "1.0", "id": 99, "method": "tools/list"}', b"null"]:
        mcp.send_raw(line)
        mcp.still_answers(paper_id)
    # An unknown method is a JSON-RPC error naming it.
    reply = mcp.call("papers/steal", {})
    assert reply["error"]["code"] == -32601, reply
    mcp.still_answers(paper_id)


def test_unknown_tools_and_wrong_argument_types_are_tool_errors_naming_them(mcp: RawMcp, paper_id: str) -> None:
    assert "no_such_tool" in tool_error_text(mcp.tool("no_such_tool", {}))
    cases = [
        ("search_papers", {"query": 42}, "query"),
        ("search_papers", {"query": "x", "k": "ten"}, "k"),
        ("search_papers", {"query": "x", "k": 0}, "k"),
        ("search_papers", {"query": "x", "k": 10.5}, "k"),
        ("search_papers", {"query": "x", "method": "psychic"}, "method"),
        ("search_papers", {"query": "x", "filters": {"min_citations": -1}}, "min_citations"),
        ("search_papers", {"query": "x", "filters": {"colour": ["red"]}}, "colour"),
        ("search_papers", {"query": "x", "cutoff": "yesterday"}, "cutoff"),
        ("search_papers", {}, "query"),
        ("get_paper", {"id": None}, "id"),
        ("get_paper", {"id": ["a", "b"]}, "id"),
        ("score_ideas", {"ideas": "an idea"}, "ideas"),
        ("score_ideas", {"ideas": []}, "ideas"),
        ("score_ideas", {"ideas": [{"text": "x", "date": 2020}]}, "date"),
        ("score_ideas", {"ideas": [{"text": "x"}], "q": -3}, "q"),
        ("check_claims", {"proposal": "text"}, "proposal"),
        ("check_claims", {"proposal": {"text": "x"}, "pool": []}, "pool"),
        ("find_duplicates", {"ideas": [{"text": "x"}], "threshold": 2}, "threshold"),
        ("find_duplicates", {"ideas": [{"text": "x"}], "threshold": "high"}, "threshold"),
    ]
    for name, arguments, named in cases:
        text = tool_error_text(mcp.tool(name, arguments))
        assert named in text, f"{name} {arguments}: {text}"
    # Arguments that are not an object at all.
    for arguments in (["query"], "query", 7):
        assert tool_error_text(mcp.tool("search_papers", arguments))
    mcp.still_answers(paper_id)


def test_huge_arguments_are_answered_or_refused_and_the_server_goes_on(mcp: RawMcp, paper_id: str) -> None:
    huge_text = "graph neural networks for molecules " * 150_000  # about 5 MB
    reply = mcp.tool("search_papers", {"query": huge_text, "k": 3, "method": "bm25"})
    assert "result" in reply, reply
    if not reply["result"].get("isError"):
        assert len(reply["result"]["structuredContent"]["results"]) <= 3
    reply = mcp.tool("score_ideas", {"ideas": [{"text": huge_text}], "p": 10, "q": 5, "evidence": 1})
    assert "result" in reply, reply
    too_many = [{"text": "x"}] * 1001
    assert "ideas" in tool_error_text(mcp.tool("score_ideas", {"ideas": too_many}))
    reply = mcp.tool("get_paper", {"id": "x" * 2_000_000})
    assert "no paper with id" in tool_error_text(reply)
    mcp.still_answers(paper_id)


def test_many_calls_in_flight_are_each_answered_once(mcp: RawMcp, paper_id: str) -> None:
    sent = {}
    for i in range(24):
        if i % 3 == 0:
            sent[mcp.send("tools/call", {"name": "get_paper", "arguments": {"id": paper_id}})] = "paper"
        elif i % 3 == 1:
            sent[mcp.send("tools/call", {"name": "search_papers", "arguments": {"query": f"topic {i}", "k": 2,
                                                                               "method": "bm25"}})] = "search"
        else:
            sent[mcp.send("tools/call", {"name": "get_paper", "arguments": {"id": f"missing-{i}"}})] = "missing"
    answered: dict[int, dict[str, Any]] = {}
    while len(answered) < len(sent):
        message = mcp.receive()
        if "id" in message:
            assert message["id"] in sent and message["id"] not in answered, message
            answered[message["id"]] = message
    for request_id, kind in sent.items():
        result = answered[request_id]["result"]
        assert bool(result.get("isError")) == (kind == "missing"), (kind, result)
    mcp.still_answers(paper_id)


def test_a_client_that_leaves_mid_call_ends_the_stdio_server_cleanly(demo_dir: str, paper_id: str) -> None:
    server = RawMcp(demo_dir)
    server.initialize()
    server.send("tools/call", {"name": "check_claims", "arguments": {"proposal": {"text": "graph neural networks"}}})
    time.sleep(0.5)  # the call is under way (no timing is asserted)
    code = server.close()  # stdin closed mid-call: the client is gone; close() waits 60 s at most
    # Ended at once (by its watcher's SIGTERM: the call would run for minutes), not crashed.
    assert code in (0, -signal.SIGTERM), (code, server.stderr())
    # A new server on the same corpus answers.
    again = RawMcp(demo_dir)
    try:
        again.initialize()
        again.still_answers(paper_id)
    finally:
        again.close()


def test_a_client_that_leaves_mid_call_over_http_leaves_the_server_answering(demo_dir: str, paper_id: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([str(CLI), "mcp", "--corpus", demo_dir, "--device", "cpu", "--http", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # until it listens (a bounded wait, not a timing assertion)
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None
            time.sleep(0.1)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(body: dict[str, Any], session: str | None = None, timeout: float = 120) -> Any:
            import requests

            h = dict(headers, **({"Mcp-Session-Id": session} if session else {}))
            return requests.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=h, timeout=timeout)

        first = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                 "clientInfo": {"name": "hostile-test", "version": "0"}}})
        assert first.status_code == 200, first.text
        session = first.headers.get("mcp-session-id")
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        # A slow call whose client hangs up at once.
        raw = socket.create_connection(("127.0.0.1", port))
        body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "check_claims", "arguments": {"proposal": {"text": "graph networks"}}}})
        request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   f"Accept: application/json, text/event-stream\r\n"
                   + (f"Mcp-Session-Id: {session}\r\n" if session else "")
                   + f"Content-Length: {len(body)}\r\n\r\n{body}")
        raw.sendall(request.encode())
        raw.close()
        # Malformed bodies over HTTP are errors too.
        bad = post({"jsonrpc": "2.0"}, session)
        assert bad.status_code in (200, 202, 400), bad.text
        reply = post({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "get_paper", "arguments": {"id": paper_id}}}, session)
        assert reply.status_code == 200, reply.text
        assert paper_id in reply.text
        assert server.poll() is None
    finally:
        server.terminate()
        server.wait(timeout=60)
