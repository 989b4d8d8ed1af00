"""Metrics (verdicts → **metrics** → trial record): Δfaithful: the relative loss of faithfulness under a variant,
and its release grade."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Grade = Literal["robust", "watch", "sensitive"]


def delta_faithful(f0: Sequence[float] | NDArray[np.float64], fv: Sequence[float] | NDArray[np.float64]) -> float:
    """Δfaithful = (mean(F0) − mean(Fv)) / mean(F0), a ratio of means over the same cases.

    ``f0[i]`` and ``fv[i]`` are the faithfulness of case i at v0 and at the variant; the caller drops
    cases missing on either side from both lists. Positive values mean the injected chunks hurt; negative values
    mean the variant scored higher. When mean(F0) = 0 the relative drop is undefined and the result is
    ``float('nan')``: report it as undefined, never as 0.

    >>> delta_faithful([1.0, 0.5], [0.75, 0.5])
    0.16666666666666666
    """
    if len(f0) != len(fv):
        raise ValueError(f"paired lists differ in length: {len(f0)} at v0, {len(fv)} at the variant")
    if len(f0) == 0:
        raise ValueError("Δfaithful needs at least one case")
    baseline = float(np.mean(f0))
    if baseline == 0:
        return math.nan
    return (baseline - float(np.mean(fv))) / baseline


def grade_delta(delta: float, robust: float = 0.05, sensitive: float = 0.15) -> Grade:
    """robust if Δ ≤ ``robust``; watch if ``robust`` < Δ ≤ ``sensitive``; sensitive if Δ > ``sensitive``.

    Defaults follow the practice of 5% / 15%; critical categories pass tighter limits. An undefined
    (NaN) Δ has no grade and raises ``ValueError``.
    """
    if robust > sensitive:
        raise ValueError(f"robust limit {robust} is above the sensitive limit {sensitive}")
    if math.isnan(delta):
        raise ValueError("Δfaithful is undefined (mean faithfulness at v0 is 0): it has no grade")
    if delta <= robust:
        return "robust"
    if delta <= sensitive:
        return "watch"
    return "sensitive"
