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


def test_each_kind_of_wheel_build_has_its_own_build_directory() -> None:
    """scikit-build-core's own reading of pyproject.toml: ON, OFF and AUTO (or unset) each build in
    a directory of their own, so that a CUDA build and the test suite's CPU wheel never
    reconfigure each other's."""
    from scikit_build_core.settings.skbuild_read_settings import SettingsReader

    def build_dir(env: dict[str, str]) -> str:
        return SettingsReader.from_file(ROOT / "pyproject.toml", state="wheel", env=env).settings.build_dir

    assert build_dir({"NOVELTY_CUDA": "ON"}) == build_dir({"NOVELTY_CUDA": "on"}) == "build/wheel-cu13-{wheel_tag}"
    assert build_dir({"NOVELTY_CUDA": "OFF"}) == build_dir({"NOVELTY_CUDA": "off"}) == "build/wheel-cpu-{wheel_tag}"
    assert build_dir({"NOVELTY_CUDA": "AUTO"}) == build_dir({}) == "build/wheel-{wheel_tag}"
