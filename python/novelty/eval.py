"""novelty.eval: evaluation metrics of novelty scores (`novelty eval auroc`)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import _core


def auroc(scores: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray) -> dict[str, Any]:
    """Exact AUROC of scores against labels (1 = novel, 0 = not); higher scores mean more novel.

    Every (positive, negative) pair counts 1 when the positive scores higher and 1/2 on a tie.
    NaN scores (and None) are left out. Returns {"auroc": float or None (without both classes),
    "n_pos", "n_neg", "n_missing", "reason"}. ValueError when the lengths differ or a label is
    not 0 or 1.
    """
    values = [float("nan") if s is None else float(s) for s in scores]
    return _core.auroc(values, [int(x) for x in labels])
