"""The wheel's version and dependencies: the project's version with a local label that says what it
was built for, and what that build needs at run time.

"0.1.0+cpu" for the CPU-only module, "0.1.0+cu13" for one with the CUDA 13 backend, so the
wheel's file name says which it is (novelty-0.1.0+cu13-cp311-cp311-linux_x86_64.whl). A cu13
wheel also depends on the PyPI wheels of the shared libraries its module and CLI load: RMM and
rapids-logger (pinned as in scripts/requirements.txt) and cuBLAS 13, found through the run paths
python/CMakeLists.txt sets.
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


#: What every wheel needs.
DEPENDENCIES = ["numpy>=1.24"]
#: What a cu13 wheel needs besides: the libraries of its CUDA backend.
CUDA_DEPENDENCIES = ["librmm-cu13==26.10.0", "rapids-logger==0.3.0", "nvidia-cublas>=13.0,<14"]


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The [project] fields it provides: the version and the dependencies."""
    if settings:
        raise RuntimeError(f"novelty_wheel_kind takes no settings, got {sorted(settings)}")
    kind = wheel_kind()
    dependencies = DEPENDENCIES + (CUDA_DEPENDENCIES if kind == "cu13" else [])
    return {"version": f"{_project_version()}+{kind}", "dependencies": dependencies}
