"""docs/openapi.yaml against the route table of `novelty serve` (issue 48): every operation the
server answers is in the spec and every operation of the spec is served, so that neither drifts.
The table comes from the server itself (`novelty serve --print-routes`), and every place in
host/src/server that routes an operation notes it in that table (checked in the source below)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import yaml

from conftest import CLI, ROOT

SPEC = ROOT / "docs" / "openapi.yaml"
SERVER_SOURCES = ROOT / "host" / "src" / "server"


def template_of(pattern: str) -> str:
    """A routed path with each parameter as {}: the groups of a cpp-httplib regular expression
    ("/v1/jobs/([0-9A-Za-z]+)") and the names of an OpenAPI template ("/v1/jobs/{id}") alike. An
    optional trailing slash ("/recommendations/v1/papers/?", which clients send) is the path
    without it."""
    if pattern.endswith("/?"):
        pattern = pattern[:-2]
    out, depth = "", 0
    for c in pattern:
        if c == "(":
            if depth == 0:
                out += "{}"
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0:
            out += c
    return re.sub(r"\{[^}]*\}", "{}", out)


def served_operations(corpus: str, *flags: str) -> set[tuple[str, str]]:
    done = subprocess.run([str(CLI), "serve", "--corpus", corpus, "--port", "0", "--threads", "1", "--print-routes",
                           *flags], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    routes = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert routes, "the server printed no routes"
    return {(r["method"], template_of(r["path"])) for r in routes}


def spec_operations() -> set[tuple[str, str]]:
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    methods = {"get", "post", "put", "delete", "patch", "head", "options"}
    return {(m.upper(), template_of(path)) for path, item in spec["paths"].items() for m in item if m in methods}


def test_template_of_makes_regex_groups_and_names_alike() -> None:
    assert template_of("/v1/jobs/([0-9A-Za-z]+)") == template_of("/v1/jobs/{id}") == "/v1/jobs/{}"
    assert template_of("/graph/v1/paper/(.+)") == "/graph/v1/paper/{}"
    assert template_of("/a/((x)|(y))/b/{name}") == "/a/{}/b/{}"
    assert template_of("/recommendations/v1/papers/?") == "/recommendations/v1/papers"


def test_every_served_operation_is_in_the_spec_and_every_spec_operation_is_served(demo_dir: str) -> None:
    served, documented = served_operations(demo_dir), spec_operations()
    assert not served - documented, f"served but not in docs/openapi.yaml: {sorted(served - documented)}"
    assert not documented - served, f"in docs/openapi.yaml but not served: {sorted(documented - served)}"
    # The table is the server's: --no-ui leaves the page's routes out of it.
    without_ui = served_operations(demo_dir, "--no-ui")
    assert served - without_ui == {("GET", "/"), ("GET", "/ui"), ("GET", "/ui/{}")}


def test_every_routing_call_in_the_server_notes_its_route() -> None:
    """A route added with http.Get or http.Post but not noted would be answered and yet missing
    from --print-routes, and so from the comparison above. The 405 handlers of other methods
    (inside the not_allowed helpers) are no operations."""
    call = re.compile(r"\bhttp\.(Get|Post|Put|Delete|Patch|Options)\(")
    unnoted = []
    for source in sorted(SERVER_SOURCES.rglob("*.cpp")):
        lines = source.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not call.search(line) or "allowed !=" in line or re.match(r"\s*http\.(Put|Delete)\(path, handler\)", line):
                continue
            before = "\n".join(lines[max(0, i - 3):i])
            if "note_route(" not in before:
                unnoted.append(f"{source.relative_to(ROOT)}:{i + 1}: {line.strip()}")
    assert not unnoted, "routing calls without note_route beside them:\n" + "\n".join(unnoted)
