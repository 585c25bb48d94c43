"""The wheel's version: the project's, with a local label that says what it was built for.

"0.1.0+cpu" for the CPU-only module, "0.1.0+cu13" for one with the CUDA 13 backend, so the
wheel's file name says which it is (novelty-0.1.0+cu13-cp311-cp311-linux_x86_64.whl).
NOVELTY_CUDA (ON, OFF or AUTO, the default) chooses as the CMake option of the same name does:
AUTO builds CUDA when nvcc is found. python/CMakeLists.txt refuses a build that would not match.
A dynamic-metadata provider (pyproject.toml, [[tool.dynamic-metadata]]) for scikit-build-core.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any, Mapping

_ROOT = Path(__file__).resolve().parents[2]


def _project_version() -> str:
    text = (_ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    found = re.search(r"project\(novelty VERSION ([0-9.]+)", text)
    if not found:
        raise RuntimeError("CMakeLists.txt: no 'project(novelty VERSION x.y.z' line")
    return found.group(1)


def wheel_kind() -> str:
    """"cu13" or "cpu"."""
    choice = os.environ.get("NOVELTY_CUDA", "AUTO").upper()
    if choice not in ("ON", "OFF", "AUTO"):
        raise RuntimeError(f"NOVELTY_CUDA must be ON, OFF or AUTO, not '{choice}'")
    if choice == "AUTO":
        has_nvcc = shutil.which("nvcc") is not None or Path("/usr/local/cuda/bin/nvcc").exists()
        choice = "ON" if has_nvcc else "OFF"
    return "cu13" if choice == "ON" else "cpu"


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The [project] fields it provides: the version alone."""
    if settings:
        raise RuntimeError(f"novelty_wheel_kind takes no settings, got {sorted(settings)}")
    return {"version": f"{_project_version()}+{wheel_kind()}"}
