"""docs/python.md documents the whole public API: every name of `novelty.__all__`, every public
member of its classes (as `Class.member`, or in a table row or paragraph that names the class), and every
function of `novelty.eval`. A new call without documentation fails here."""

from __future__ import annotations

import inspect
import re

import novelty

from conftest import ROOT

DOC = ROOT / "docs" / "python.md"


def members() -> list[tuple[str, str]]:
    """(class, member) for each public member of the exported classes (exceptions left out)."""
    out = []
    for name in novelty.__all__:
        value = getattr(novelty, name)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            out += [(name, member) for member in vars(value) if not member.startswith("_")]
    return out


def named_with_class(cls: str, member: str, text: str) -> bool:
    """`Class.member`, or `.member` / `member` in a table row or paragraph that names Class."""
    if re.search(re.escape(f"{cls}.{member}") + r"\b", text):
        return True
    pattern = r"(\.|\b)" + re.escape(member) + r"\b"
    blocks = re.split(r"\n\s*\n|\n(?=\|)", text)  # paragraphs, and each table row on its own
    return any(cls in block and re.search(pattern, block) for block in blocks)


def test_every_public_name_is_in_the_python_docs() -> None:
    text = DOC.read_text(encoding="utf-8")
    top = [n for n in novelty.__all__ if not re.search(r"(?<![\w.])(novelty\.)?" + re.escape(n) + r"\b", text)]
    assert not top, f"docs/python.md does not name: {top}"
    found = members()
    assert len(found) > 30  # a listing that finds nothing must fail
    missing = [f"{c}.{m}" for c, m in found if not named_with_class(c, m, text)]
    assert not missing, f"docs/python.md does not name: {missing}"
    functions = [n for n, v in vars(novelty.eval).items() if not n.startswith("_") and inspect.isfunction(v)]
    assert functions and all(f"eval.{n}" in text for n in functions), functions
