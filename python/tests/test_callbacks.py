"""Python code that the engine calls back (progress callbacks) and Ctrl-C during a long call: an
exception reaches the caller as itself after the engine has stopped, the interpreter never
aborts, re-entrant calls never deadlock, and the index stays usable afterwards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import novelty

from conftest import BUILD


def make_corpus(where: Path, n: int, dim: int, seed: int = 5) -> novelty.Corpus:
    """A corpus of n dated papers with random unit vectors (no cached neighbour densities)."""
    papers = where / "papers.jsonl"
    with papers.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"p{i}", "title": f"paper {i}", "date": f"{2000 + i * 20 // n}-01-01"}) + "\n")
    corpus = novelty.Corpus.import_([(str(papers), "jsonl")], where / "corpus")
    vectors = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return corpus.add_vectors(vectors, [f"p{i}" for i in range(n)])


@pytest.fixture()
def fresh(tmp_path: Path) -> novelty.Index:
    """An index over a corpus of its own: its first score computes the densities (and calls
    progress), since no earlier test cached them."""
    return novelty.Index(make_corpus(tmp_path, 3000, 16), device="cpu")


def ideas_for(index: novelty.Index, n: int = 4) -> np.ndarray:
    return np.random.default_rng(9).standard_normal((n, index.corpus.dim)).astype(np.float32)


class Stop(Exception):
    pass


def test_an_exception_in_a_progress_callback_reaches_the_caller_as_itself(fresh: novelty.Index) -> None:
    calls = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        raise Stop(f"stopped at {done}/{total}")

    with pytest.raises(Stop, match="stopped at"):
        novelty.score(fresh, ideas_for(fresh), progress=progress)
    assert len(calls) == 1
    # The engine stopped cleanly: the index serves the same call afterwards, to the end.
    records = novelty.score(fresh, ideas_for(fresh))
    assert len(records) == 4 and all(r["scores"]["rnd"] is not None for r in records)


def test_a_keyboard_interrupt_raised_in_a_callback_propagates(fresh: novelty.Index) -> None:
    def progress(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        novelty.score(fresh, ideas_for(fresh), progress=progress)
    assert len(fresh.search(ideas_for(fresh), k=3).ids) == 4


def test_a_callback_calling_back_into_the_engine_gets_an_error_not_a_deadlock(fresh: novelty.Index) -> None:
    seen: list[str] = []

    def progress(done: int, total: int) -> None:
        for call in (lambda: fresh.search(ideas_for(fresh, 1), k=3), lambda: fresh.corpus.paper(0)):
            try:
                call()
                seen.append("worked")
            except novelty.UsageError as e:
                seen.append(str(e))

    records = novelty.score(fresh, ideas_for(fresh), progress=progress)
    assert len(records) == 4
    assert seen, "the densities were computed without a progress call"
    assert any("the index is busy with the call whose progress callback is running" in s for s in seen)
    assert any("the corpus is busy with the call whose progress callback is running" in s for s in seen)
    # The same objects work again once the call has returned.
    assert fresh.corpus.paper(0)["id"] == "p0"


def test_an_uncaught_reentrant_call_ends_the_outer_call_with_its_error(fresh: novelty.Index) -> None:
    def progress(done: int, total: int) -> None:
        fresh.corpus.find_row("p1")

    with pytest.raises(novelty.UsageError, match="cannot call back into it"):
        novelty.score(fresh, ideas_for(fresh), progress=progress)


def test_an_exception_in_an_import_progress_callback_propagates(tmp_path: Path) -> None:
    papers = tmp_path / "papers.jsonl"
    papers.write_text("".join(json.dumps({"id": f"p{i}", "title": f"t {i}"}) + "\n" for i in range(20)))

    def progress(done: int, total: int) -> None:
        raise Stop("import stopped")

    with pytest.raises(Stop, match="import stopped"):
        novelty.Corpus.import_([(str(papers), "jsonl")], tmp_path / "c", progress=progress)


def test_a_claims_progress_callback_gets_its_stage_and_its_exception_propagates(
    demo_dir: str, corpus: novelty.Corpus, ideas: list[dict]
) -> None:
    stages: list[str] = []

    def progress(stage: str, done: int, total: int) -> None:
        stages.append(stage)
        raise Stop(f"stopped in {stage}")

    with pytest.raises(Stop, match="stopped in pool claims"):
        novelty.claims(demo_dir, ideas[:1], pool=[corpus.paper(r)["id"] for r in range(5)],
                       progress=progress)
    assert stages == ["pool claims"]


# Ctrl-C during a long score, in a process of its own, with enough ideas against a corpus large
# enough that computing their neighbours' densities (on demand, in search calls of 4,096 papers
# with progress between them) takes many progress periods. The child says "ready" from its first
# progress call ("callback"), or, without a callback ("none"), once a watcher thread sees the main
# thread inside the engine's score call (its top frame at the _core.score line of _score.py: the
# engine runs without the GIL); then the parent sends SIGINT.
CHILD = textwrap.dedent(
    """
    import sys, threading, time
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import novelty
    from novelty import _score
    index = novelty.Index(sys.argv[2], device="cpu")
    ideas = np.random.default_rng(1).standard_normal((2000, index.corpus.dim)).astype(np.float32)
    said = []
    def ready(what):
        if not said:
            said.append(1)
            print("ready", what, flush=True)
    def progress(done, total):
        ready("progress")
    call_line = next(i for i, line in enumerate(open(_score.__file__), 1) if "_core.score(" in line)
    main = threading.main_thread().ident
    def watch():
        while not said:
            frame = sys._current_frames().get(main)
            if frame is not None and frame.f_code.co_filename == _score.__file__ and frame.f_lineno == call_line:
                ready("in the engine")
            time.sleep(0.01)
    if sys.argv[3] == "none":
        threading.Thread(target=watch, daemon=True).start()
    try:
        novelty.score(index, ideas, progress=progress if sys.argv[3] == "callback" else None)
    except KeyboardInterrupt:
        # The index is usable after the interrupt: a search answers.
        print("searched", len(index.search(ideas, k=5).ids), flush=True)
        raise
    print("finished", flush=True)
    """
)


@pytest.fixture(scope="module")
def large_corpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_corpus(tmp_path_factory.mktemp("large"), 30_000, 64).dir


def run_interrupted(corpus_dir: str, mode: str) -> tuple[int, str, str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(BUILD / "python"), corpus_dir, mode],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None and child.stderr is not None
        line = child.stdout.readline()
        assert line.startswith("ready"), line + child.stderr.read()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=300)  # a guard against a hang, not a time limit
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, line + out, err


@pytest.mark.parametrize("mode", ["callback", "none"])
def test_ctrl_c_during_a_long_score_raises_keyboard_interrupt(large_corpus: str, mode: str) -> None:
    code, out, err = run_interrupted(large_corpus, mode)
    assert code != -signal.SIGABRT and "terminate called" not in err, err
    assert "Traceback" in err and err.rstrip().endswith("KeyboardInterrupt"), err
    assert "finished" not in out, "the score ended before the interrupt reached it"
    # Raised from inside the engine's call (after it stopped), and the index answered afterwards.
    assert "_core.score(" in err, err
    assert "searched 2000" in out, out + err
    assert code in (1, -signal.SIGINT), (code, err)
    # Interrupted while the densities were computed: they were not finished, so not cached (a
    # score that ran to its end before the interrupt took effect would have cached them).
    assert not list((Path(large_corpus) / "cache").glob("selfjoin-*")), "the densities were computed to the end"
    assert not list((Path(large_corpus) / "cache").glob("densities-*")), "the densities were computed to the end"
