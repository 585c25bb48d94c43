"""The wheel: `pip wheel` of the project root gives novelty-<version>+cpu-*.whl holding the module,
the stubs and the CLI, and it installs into a fresh virtual environment, imports, and scores the
demo ideas there. It configures the engine once more in build/wheel-cpu-<tag>, where ccache serves what
build/cpu compiled (about 10 s then; a cold build takes many minutes on 2 cores). scripts/test.sh
runs it (NOVELTY_TEST_WHEEL=1) unless NOVELTY_TEST_WHEEL=0; a bare pytest run skips it."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import IDEAS, ROOT

pytestmark = pytest.mark.skipif(os.environ.get("NOVELTY_TEST_WHEEL") != "1", reason="set NOVELTY_TEST_WHEEL=1")


def build_wheel(out: Path) -> Path:
    env = dict(os.environ, NOVELTY_CUDA="OFF")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # the pinned cmake >= 4
    env.setdefault("CCACHE_BASEDIR", str(ROOT))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q", "-w", str(out),
                    str(ROOT)], check=True, env=env, timeout=1500)
    (wheel,) = out.glob("novelty-*.whl")
    return wheel


def test_wheel_installs_into_a_fresh_environment(tmp_path: Path, demo_dir: str) -> None:
    wheel = build_wheel(tmp_path / "dist")
    assert "+cpu-" in wheel.name, wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    for wanted in ("novelty/__init__.py", "novelty/_core.pyi", "novelty/py.typed"):
        assert wanted in names
    assert any(n.startswith("novelty/_core.") and n.endswith(".so") for n in names)
    assert any(n.endswith(".data/scripts/novelty") for n in names), "the CLI is not in the wheel"

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel),
                    "numpy==2.4.6"], check=True, timeout=600)
    script = (
        "import json, sys, novelty\n"
        "ideas = [json.loads(l) for l in open(sys.argv[2])]\n"
        "records = novelty.score(novelty.Index(sys.argv[1], 'cpu'), ideas)\n"
        "print(novelty.__file__, len(records), records[0]['neighbors'][0]['id'])\n"
    )
    env = dict(os.environ, NOVELTY_MODEL_DIR=str(ROOT / "models" / "all-MiniLM-L6-v2"))
    done = subprocess.run([str(python), "-c", script, demo_dir, str(IDEAS)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    location, count, _ = done.stdout.split()
    assert location.startswith(str(env_dir)) and int(count) == 20
    cli = subprocess.run([str(env_dir / "bin" / "novelty"), "info"], capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
