"""Property-based fuzzing of every HTTP operation from docs/openapi.yaml with schemathesis
(issue 48), against `novelty serve` over the demo corpus: one server without a token and one with
--token-file, called with the token and without it. Every response must be no 5xx, of a status the
spec lists for the operation, of its content type and schema, and every refusal (4xx) JSON with a
message ("error", or "message" for the Semantic Scholar gateway's 403). Examples are generated
from the spec's schemas, valid and invalid alike.

CI runs NOVELTY_FUZZ_EXAMPLES (default 12) examples per operation; bench/run_api_fuzz.sh runs
many more. Each finding is fixed with a test of its exact request elsewhere (test_api_findings.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Iterator

import hypothesis
import pytest
import requests
import schemathesis
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

from conftest import CLI, ROOT

SPEC = ROOT / "docs" / "openapi.yaml"
TOKEN = "fuzz-t0ken"
EXAMPLES = int(os.environ.get("NOVELTY_FUZZ_EXAMPLES", "12"))

# The coverage phase (boundary values of every schema, methods the path does not take) runs in the
# long run only (NOVELTY_FUZZ_COVERAGE=1): it sends hundreds of requests an operation. Of the
# methods a path does not take, those the server routes are sent (405); others never reach a route.
CONFIG = SchemathesisConfig.from_str(f"""
[phases.coverage]
enabled = {"true" if os.environ.get("NOVELTY_FUZZ_COVERAGE") == "1" else "false"}
unexpected-methods = ["PUT", "DELETE"]
""")
schema = schemathesis.openapi.from_path(SPEC, config=CONFIG)


def serve(corpus: str, *flags: str) -> tuple[subprocess.Popen[str], str]:
    """Starts `novelty serve` on a free port; returns the process and its base URL. Small limits
    keep generated requests cheap (--max-records), and jobs are answered all the same."""
    process = subprocess.Popen([str(CLI), "serve", "--corpus", corpus, "--port", "0", "--threads", "2", "-q",
                                "--max-records", "8", *flags],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"on (http://[0-9.]+:\d+) ", line)
        if found:
            return process, found.group(1)
    process.wait(timeout=30)
    raise AssertionError(f"novelty serve did not start (exit code {process.returncode})")


class Servers:
    def __init__(self, open_base: str, keyed_base: str) -> None:
        self.open_base, self.keyed_base = open_base, keyed_base
        self.session = requests.Session()


@pytest.fixture(scope="module")
def servers(demo_dir: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    token = tmp_path_factory.mktemp("fuzz") / "token.txt"
    token.write_text(TOKEN + "\n", encoding="utf-8")
    open_process, open_base = serve(demo_dir)
    keyed_process, keyed_base = serve(demo_dir, "--token-file", str(token))
    try:
        yield Servers(open_base, keyed_base)
    finally:
        for process in (open_process, keyed_process):
            process.terminate()
            assert process.wait(timeout=120) == 0, "the server stopped cleanly after the fuzzing"


def content_type(response: schemathesis.Response) -> str:
    """The reply's Content-Type (schemathesis keeps headers lower-cased, each a list of values)."""
    values = response.headers.get("content-type") or [""]
    return values[0] if isinstance(values, list) else values


def refusal_is_json_with_a_message(response: schemathesis.Response, where: str) -> None:
    if response.status_code < 400:
        return
    assert content_type(response).startswith("application/json"), \
        f"{where}: {response.status_code} is not JSON: {content_type(response)!r} {response.text[:200]!r}"
    body = json.loads(response.text)
    message = body.get("error", body.get("message")) if isinstance(body, dict) else None
    assert isinstance(message, str) and message.strip(), f"{where}: {response.status_code} without a message: {body!r}"


def needs_key(case: schemathesis.Case) -> bool:
    security = case.operation.definition.raw.get("security", schema.raw_schema.get("security"))
    return bool(security) and any(requirement for requirement in security)


CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance]


@schema.parametrize()
@hypothesis.settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck),
                     phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate])
def test_every_operation_under_generated_requests(case: schemathesis.Case, servers: Servers) -> None:
    where = f"{case.method} {case.formatted_path}"
    # The server without a token: everything but the token is the generated request's.
    response = case.call(base_url=servers.open_base, session=servers.session, timeout=120)
    case.validate_response(response, checks=CHECKS)
    refusal_is_json_with_a_message(response, where + " (no token configured)")
    # The server with a token, sent as the bearer token: the same answers.
    keyed = case.call(base_url=servers.keyed_base, session=servers.session, timeout=120,
                      headers={"Authorization": f"Bearer {TOKEN}"})
    case.validate_response(keyed, checks=CHECKS)
    refusal_is_json_with_a_message(keyed, where + " (with the token)")
    # Without it: refused (401, or 403 on the Semantic Scholar routes) where the spec asks for a key.
    bare = case.call(base_url=servers.keyed_base, session=servers.session, timeout=120)
    case.validate_response(bare, checks=CHECKS)
    refusal_is_json_with_a_message(bare, where + " (token missing)")
    # (a path parameter the route's pattern does not take leaves the path unrouted: a 404 whatever
    # the token, which tells nothing of what is served)
    unrouted = bare.status_code == 404 and bool(case.path_parameters)
    if needs_key(case) and case.method.upper() == case.operation.method.upper() and not unrouted:
        assert bare.status_code in (401, 403), f"{where}: answered {bare.status_code} without the token"
