"""The committed stubs of the compiled module (python/novelty/_core.pyi) are what nanobind's
stubgen makes of the module built now: regenerate them with
    (cd build/cpu/python && ../../../.venv/bin/python -m nanobind.stubgen -m novelty._core -o ../../../python/novelty/_core.pyi)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import BUILD, ROOT


def test_committed_stubs_match_the_module(tmp_path: Path) -> None:
    out = tmp_path / "_core.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "novelty._core", "-o", str(out)],
                   cwd=BUILD / "python", check=True, timeout=120)
    committed = (ROOT / "python" / "novelty" / "_core.pyi").read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") == committed, "python/novelty/_core.pyi is stale: regenerate it (see above)"
