"""Metrics (verdicts → **metrics** → trial record): keypoint correctness of one answer: the lenient counterpart of
faithfulness."""

from __future__ import annotations

from collections.abc import Sequence

from tuner.metrics.faithfulness import answer_verdicts
from tuner.verdicts import CONTRADICTED, KeypointVerdict


def correct(verdicts: Sequence[KeypointVerdict]) -> float | None:
    """correct = |{i : answer_i ≠ contradicted}| / |keypoints|; None if any keypoint verdict is missing.

    The share of the reference keypoints the answer states or at least does not contradict: leaving a
    keypoint out (or abstaining) is correct, stating a wrong value is not. Faithful asks more (the answer
    must state the keypoint), so faithful ≤ correct for every answer; a variant that lowers correct
    made the answer say something wrong, one that lowers only faithful made it say less.

    >>> correct([KeypointVerdict("supported", "supported"), KeypointVerdict("absent", "supported"),
    ...          KeypointVerdict("contradicted", "supported"), KeypointVerdict("contradicted", "absent")])
    0.5
    """
    labels = answer_verdicts(verdicts)
    if labels is None:
        return None
    return sum(label != CONTRADICTED for label in labels) / len(labels)
