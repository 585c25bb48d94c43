"""The findings of the HTTP API's fuzzing (python/tests/test_api_fuzz.py, issue 48), each as the
exact request that showed it, against `novelty serve` on the demo corpus.

1. A request key beginning with a NUL byte ("\\u0000...") was refused with an empty message: the
   message began with the key, and the NUL cut it when read back as a C string.
2. The same on the Semantic Scholar routes, for a query parameter's name and a paper id."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest

from conftest import CLI


@pytest.fixture(scope="module")
def base(demo_dir: str) -> Iterator[str]:
    process = subprocess.Popen([str(CLI), "serve", "--corpus", demo_dir, "--port", "0", "--threads", "2"],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"on (http://[0-9.]+:\d+) ", line)
        if found:
            break
    else:
        raise AssertionError("novelty serve did not start")
    try:
        yield found.group(1)
    finally:
        process.terminate()
        process.wait(timeout=60)


def call(url: str, body: bytes | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_request_key_that_begins_with_a_nul_byte_is_named_in_the_refusal(base: str) -> None:
    body = json.dumps({"queries": [{"id": "q", "text": "graph neural networks"}], "\u0000\u00cc;EW": 1}).encode()
    status, reply = call(base + "/v1/search", body)
    assert status == 400
    assert reply["error"].startswith("\\x00\u00cc;EW: unknown key (the request takes"), reply
    assert reply["parameter"] == "\\x00\u00cc;EW"


def test_s2_parameter_names_and_paper_ids_with_a_nul_byte_are_shown_escaped(base: str) -> None:
    status, reply = call(base + "/graph/v1/paper/search?query=graph&%00odd=1")
    assert status == 400
    assert reply["error"].startswith("Unrecognized query params: [\\x00odd]; this server takes"), reply
    status, reply = call(base + "/graph/v1/paper/%00abc")
    assert status == 404
    assert reply["error"] == "Paper with id \\x00abc not found", reply
    status, reply = call(base + "/graph/v1/paper/search?query=graph&year=%00")
    assert status == 400
    assert reply["error"].startswith("Unacceptable query params: [year=\\x00]"), reply
