"""The wheel's CUDA architectures (pyproject.toml): sm_80, 86, 89, 90, 100 and 120 machine code
plus compute_120 PTX, the GPUs users have, while CI's scripts/build.sh keeps the CMake default of
one architecture. A guard on the configuration; the six-architecture build itself is too long for
CI (docs/building.md gives its command and time)."""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT

WHEEL_ARCHITECTURES = "80-real;86-real;89-real;90-real;100-real;120-real;120-virtual"


def test_wheels_compile_for_six_architectures_plus_ptx() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    define = config["tool"]["scikit-build"]["cmake"]["define"]["NOVELTY_CUDA_ARCHITECTURES"]
    assert define == {"env": "NOVELTY_CUDA_ARCHITECTURES", "default": WHEEL_ARCHITECTURES}


def test_ci_keeps_the_single_architecture_default() -> None:
    cmake = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    default = re.search(r'set\(NOVELTY_CUDA_ARCHITECTURES "([^"]+)" CACHE', cmake)
    assert default and default.group(1) == "90-real;90-virtual"
    assert "NOVELTY_CUDA_ARCHITECTURES" not in (ROOT / "scripts" / "build.sh").read_text(encoding="utf-8")
