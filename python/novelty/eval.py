"""novelty.eval: evaluation metrics of novelty scores (`novelty eval auroc`)."""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from . import _core


def _score(value: Any, i: int) -> float:
    if value is None:
        return float("nan")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise _core.UsageError(f"auroc: scores[{i}] is {value!r}, not a number (None or NaN marks a missing score)")
    return float(value)


def _label(value: Any, i: int) -> int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, numbers.Real) and not (isinstance(value, float) and math.isnan(value)) and value in (0, 1):
        return int(value)
    raise _core.UsageError(f"auroc: labels[{i}] is {value!r}; labels are 1 (novel) or 0 (not novel)")


def _sequence(values: Any, name: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise _core.UsageError(f"auroc: {name} must be a sequence or a 1-D array, not {type(values).__name__}")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise _core.UsageError(f"auroc: {name} must be 1-D, not an array of shape {values.shape}")
    return list(values)


def auroc(scores: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray) -> dict[str, Any]:
    """Exact AUROC of scores against labels (1 = novel, 0 = not); higher scores mean more novel.

    Every (positive, negative) pair counts 1 when the positive scores higher and 1/2 on a tie.
    NaN scores (and None) are left out. Returns {"auroc": float, "n_pos", "n_neg", "n_missing"}.
    UsageError (a ValueError) saying why when it cannot be computed: no scores, one label per
    score missing (the lengths differ), a label other than 0 or 1, a score that is not a number,
    or no scored idea of one of the two labels (all novel, all not novel, or all missing).
    """
    values = _sequence(scores, "scores")
    marks = _sequence(labels, "labels")
    if len(values) != len(marks):
        raise _core.UsageError(f"auroc: needs one label per score; got {len(values)} scores and {len(marks)} labels")
    if not values:
        raise _core.UsageError("auroc: no scores were given")
    result = _core.auroc([_score(s, i) for i, s in enumerate(values)], [_label(x, i) for i, x in enumerate(marks)])
    if result["auroc"] is None:
        raise _core.UsageError(f"auroc: {_why_undefined(result)}")
    del result["reason"]
    return result


def _why_undefined(result: dict[str, Any]) -> str:
    n_pos, n_neg, n_missing = result["n_pos"], result["n_neg"], result["n_missing"]
    if n_pos == 0 and n_neg == 0:
        return f"all {n_missing} scores are missing (None or NaN)"
    have, count, lacking = ("1 (novel)", n_pos, "0 (not novel)") if n_neg == 0 else ("0 (not novel)", n_neg, "1 (novel)")
    missing = f"; {n_missing} more are missing" if n_missing else ""
    return (f"AUROC needs ideas of both labels, but all {count} scored ideas are labelled {have}{missing}: "
            f"no scored idea is labelled {lacking}")
