"""Metrics (verdicts → **metrics** → trial record): misled: the injected chunks turned a keypoint the clean answer got right into
a wrong one."""

from __future__ import annotations

from collections.abc import Sequence

from tuner.metrics.faithfulness import answer_verdicts
from tuner.verdicts import CONTRADICTED, SUPPORTED, KeypointVerdict


def misled(v0_verdicts: Sequence[KeypointVerdict], v_verdicts: Sequence[KeypointVerdict]) -> bool | None:
    """misled = ∃ i: answer_i(v0) = supported ∧ answer_i(v) = contradicted.

    Per keypoint: the case is misled when at least one keypoint was stated correctly with the clean
    context (v0) and contradicted with the noisy variant's context. Keypoints are paired by position,
    so both lists must come from the same case. A keypoint that goes from supported to absent is a
    loss of faithfulness but not "misled". None (missing) if any verdict on either side is missing.
    The misled rate is the mean of this flag over the cases where it is defined.
    """
    if len(v0_verdicts) != len(v_verdicts):
        raise ValueError(f"keypoint counts differ: {len(v0_verdicts)} at v0, {len(v_verdicts)} at the variant")
    clean = answer_verdicts(v0_verdicts)
    noisy = answer_verdicts(v_verdicts)
    if clean is None or noisy is None:
        return None
    return any(a == SUPPORTED and b == CONTRADICTED for a, b in zip(clean, noisy, strict=True))
