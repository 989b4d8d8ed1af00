"""Statistics (metrics → **estimates** → front): power: how many cases a paired comparison needs before an observed
difference separates from zero."""

from __future__ import annotations

import math
from statistics import NormalDist


def cases_to_separate(difference: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """The number of cases at which a paired difference ``difference`` would separate from 0 with probability
    ``power`` in a two-sided test at level ``alpha``:

        n = ⌈((z_{1−α/2} + z_{power}) · sd_d / d)²⌉

    with d the observed difference of the two configurations and sd_d the standard deviation of their per-case
    paired differences (``sd``; where the objective has run-to-run noise, that noise belongs in it too). At α 5% and
    80% power z_{1−α/2} + z_{power} = 1.95996 + 0.84162 = 2.80158. None when the difference is 0 or not finite (no
    number of cases separates a difference that is not there); at least 1.

    It is the usual normal-approximation sample size of a paired test, taking the observed difference as the true
    one: a plan for how many cases to label, not a promise (an observed difference near the noise overstates itself).

    >>> cases_to_separate(0.05, 0.2)   # (2.80158 · 0.2 / 0.05)² = 11.2063² = 125.6 → 126
    126
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha} and {power}")
    if sd < 0:
        raise ValueError(f"sd must be non-negative, got {sd}")
    if not math.isfinite(difference) or difference == 0 or not math.isfinite(sd):
        return None
    normal = NormalDist()
    z = normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)
    return max(1, math.ceil((z * sd / abs(difference)) ** 2))
