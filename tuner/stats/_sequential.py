"""Sequential tests for pruning: is a trial worse by more than a margin, looked at several times."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

import numpy as np

from tuner.stats._types import FloatValues

SpendingKind = Literal["obrien_fleming", "bonferroni"]


def one_sided_margin_test(diffs: FloatValues, margin: float = 0.0) -> float:
    """p-value of H0: mean(d) ≤ margin against H1: mean(d) > margin, by a paired one-sample t-test.

        t = (d̄ − margin) / (s / √n),  p = P(T_{n−1} ≥ t)

    with d_i the per-case differences (e.g. incumbent score − trial score) and s their sample
    standard deviation. Compare the p-value with the per-look alpha from ``alpha_spending``. With zero
    variance the t statistic is undefined and the answer is exact: p = 0 if d̄ > margin, else 1.
    At least two differences are needed (one has no variance estimate).

    >>> one_sided_margin_test([0.2, 0.2, 0.2], margin=0.1)
    0.0
    """
    array = np.asarray(diffs, dtype=np.float64)
    if array.ndim != 1 or array.size < 2:
        raise ValueError("one_sided_margin_test needs at least two paired differences")
    if not np.all(np.isfinite(array)):
        raise ValueError("one_sided_margin_test got NaN or infinite differences; drop missing cases first")
    shifted = array - margin
    mean = float(shifted.mean())
    if np.all(array == array[0]):
        return 0.0 if mean > 0 else 1.0
    from scipy import stats

    t_statistic = mean / (float(shifted.std(ddof=1)) / math.sqrt(array.size))
    return float(stats.t.sf(t_statistic, array.size - 1))


def alpha_spending(alpha: float, look: int, max_looks: int, kind: SpendingKind = "obrien_fleming") -> float:
    """The share of the overall type-I error ``alpha`` spent at look j = ``look`` of J = ``max_looks``.

    "obrien_fleming" (Lan–DeMets O'Brien–Fleming-type): α(t) = 2 − 2Φ(z_{1−α/2} / √t), t_j = j / J,
    per-look alpha = α(t_j) − α(t_{j−1}) with α(0) = 0. It spends almost nothing at early looks, so
    a trial is pruned early only on overwhelming evidence.
    "bonferroni": α / J at every look.

    The per-look alphas sum to α, so by the union bound the chance of any false rejection over all
    looks is at most α (conservative: it ignores the correlation between looks).

    >>> round(alpha_spending(0.05, 1, 1), 6)
    0.05
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 1 <= look <= max_looks:
        raise ValueError(f"look must be between 1 and max_looks={max_looks}, got {look}")
    if kind == "bonferroni":
        return alpha / max_looks
    if kind == "obrien_fleming":
        return _obrien_fleming_spent(alpha, look / max_looks) - _obrien_fleming_spent(alpha, (look - 1) / max_looks)
    raise ValueError(f"unknown alpha spending kind {kind!r}; expected 'obrien_fleming' or 'bonferroni'")


def _obrien_fleming_spent(alpha: float, t: float) -> float:
    if t == 0:
        return 0.0
    normal = NormalDist()
    return 2 - 2 * normal.cdf(normal.inv_cdf(1 - alpha / 2) / math.sqrt(t))


def alpha_spending_schedule(alpha: float, max_looks: int, kind: SpendingKind = "obrien_fleming") -> list[float]:
    """``alpha_spending`` for looks 1..J; the list sums to ``alpha``."""
    return [alpha_spending(alpha, look, max_looks, kind) for look in range(1, max_looks + 1)]
