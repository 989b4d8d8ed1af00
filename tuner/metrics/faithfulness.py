"""Metrics (verdicts → **metrics** → trial record): keypoint faithfulness of one answer, from the judge's per-keypoint
verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tuner.verdicts import CONTRADICTED, SUPPORTED, VERDICTS, KeypointVerdict

DEFAULT_MISSING_REASON: Final = "missing"


def missing_reason(verdicts: Sequence[KeypointVerdict]) -> str | None:
    """The reason of the first missing verdict ("missing" when the judge gave none), None if all are present.

    A case whose faithfulness is None is reported under this reason, never as a score of 0.
    """
    for verdict in verdicts:
        if verdict.answer is None or verdict.context is None:
            return verdict.missing_reason or DEFAULT_MISSING_REASON
    return None


def answer_verdicts(verdicts: Sequence[KeypointVerdict]) -> list[str] | None:
    """The answer verdict of every keypoint, or None if any is missing; unknown labels are bugs and raise."""
    if not verdicts:
        raise ValueError("answer metrics need at least one keypoint verdict")
    labels = [verdict.answer for verdict in verdicts]
    unknown = {label for label in labels if label is not None and label not in VERDICTS}
    if unknown:
        raise ValueError(f"unknown answer verdict(s) {sorted(unknown)}; expected one of {sorted(VERDICTS)}")
    if any(label is None for label in labels):
        return None
    return [label for label in labels if label is not None]


def faithful(verdicts: Sequence[KeypointVerdict]) -> float | None:
    """faithful = |{i : answer_i = supported ∧ context_i = supported}| / |keypoints|; None if any verdict
    (answer or context side) is missing.

    The share of the reference keypoints that the answer states and its context supports. A keypoint the
    answer states although no passage holds it came from elsewhere (the model's own knowledge, a lucky
    guess): it may be correct, but it is not faithful to the context (see ``correct`` for the lenient view).

    >>> faithful([KeypointVerdict("supported", "supported"), KeypointVerdict("absent", "supported"),
    ...           KeypointVerdict("supported", "absent")])
    0.3333333333333333
    """
    labels = answer_verdicts(verdicts)
    if labels is None or any(verdict.context is None for verdict in verdicts):
        return None
    return sum(v.answer == SUPPORTED and v.context == SUPPORTED for v in verdicts) / len(labels)


def contradicted_share(verdicts: Sequence[KeypointVerdict]) -> float | None:
    """contradicted = |{i : answer_i = contradicted}| / |keypoints|; None if any verdict is missing.

    The share of keypoints the answer gets actively wrong (as opposed to leaving them out).
    """
    labels = answer_verdicts(verdicts)
    if labels is None:
        return None
    return labels.count(CONTRADICTED) / len(labels)
