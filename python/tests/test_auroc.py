"""novelty.eval.auroc says why when an AUROC cannot be computed, instead of a bare None or a number."""

from __future__ import annotations

import numpy as np
import pytest

import novelty


def test_all_one_label_says_which() -> None:
    with pytest.raises(novelty.UsageError, match="all 3 scored ideas are labelled 1 .novel.*no scored idea is labelled 0"):
        novelty.eval.auroc([0.1, 0.2, 0.3], [1, 1, 1])
    with pytest.raises(novelty.UsageError, match="all 2 scored ideas are labelled 0"):
        novelty.eval.auroc(np.array([0.4, 0.5]), np.array([0, 0]))


def test_all_missing_and_empty() -> None:
    with pytest.raises(novelty.UsageError, match="all 2 scores are missing"):
        novelty.eval.auroc([None, float("nan")], [0, 1])
    with pytest.raises(novelty.UsageError, match="no scores were given"):
        novelty.eval.auroc([], [])


def test_mismatched_lengths() -> None:
    with pytest.raises(novelty.UsageError, match="one label per score; got 3 scores and 2 labels"):
        novelty.eval.auroc([0.1, 0.2, 0.3], [0, 1])


def test_labels_and_scores_that_are_not_what_they_seem() -> None:
    # A fractional label was truncated to 0 and counted as not novel.
    with pytest.raises(novelty.UsageError, match=r"labels\[1\] is 0.7; labels are 1 .novel. or 0"):
        novelty.eval.auroc([0.1, 0.9], [0, 0.7])
    with pytest.raises(novelty.UsageError, match=r"scores\[0\] is 'high', not a number"):
        novelty.eval.auroc(["high", 0.2], [1, 0])
    with pytest.raises(novelty.UsageError, match="must be 1-D"):
        novelty.eval.auroc(np.zeros((2, 2)), [0, 1])


def test_the_value_when_it_exists() -> None:
    got = novelty.eval.auroc([0.1, 0.5, 0.5, 0.9, None], [0, 0, 1, 1, 1])
    assert got == {"auroc": pytest.approx(0.875), "n_pos": 2, "n_neg": 2, "n_missing": 1}
    assert novelty.eval.auroc(np.array([0.2, 0.8]), np.array([False, True]))["auroc"] == 1.0
