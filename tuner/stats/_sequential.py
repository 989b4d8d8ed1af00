"""Statistics (metrics → **sequential tests** → pruning): sequential tests for pruning: will a trial end up worse than a
rival by more than a margin, looked at several times."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from tuner.stats._types import FloatValues

SpendingKind = Literal["obrien_fleming", "bonferroni"]


@dataclass(frozen=True)
class RatioExcess:
    """The outcome of ``ratio_excess_test``: the trial's estimated full ratio, the rival's exact one,
    the standard error of the estimate, the paired cases used (n of N) and the one-sided p-value."""

    estimate: float
    rival: float
    se: float
    n: int
    n_total: int
    p_value: float


def ratio_excess_test(
    a: FloatValues, b: FloatValues, rival_a: FloatValues, rival_b: FloatValues, margin: float = 0.0
) -> RatioExcess | None:
    """Is a trial's ratio R = Σ_N a / Σ_N b over all N cases larger than a rival's by more than ``margin``?

    The rival is known on all N = len(rival_a) cases; the trial only on the first m = len(a) cases of
    one random order of them (a simple random sample without replacement: the shuffled case order a
    study shares between trials). NaN marks a missing score. With S the sampled cases scored for both:

        R̂ = Σ_S a / Σ_S b,   R_F = Σ_N a^F / Σ_N b^F            (the rival's ratio, exact)
        u_i = (a_i − R̂ b_i) / b̄_S,   v_i = (a^F_i − R_F b^F_i) / b̄^F_N   (linearized ratios; Σ_N v = 0)
        R̃ = R̂ − v̄_S                    (the rival as a control variate: paired on the same cases)
        SE² = (1 − n/N) · s²(u − v) / n   (finite-population correction: n of the N cases are known)
        t = (R̃ − R_F − margin) / SE,   p = P(T_{n−1} ≥ t)

    H0: R − R_F ≤ margin against H1: R − R_F > margin. The question is what the trial's ratio on the
    whole case list will be, so the unscored cases are the only sampling uncertainty: at n = N the
    answer is exact (p = 0 if R̂ − R_F > margin, else 1). On a partial sample with no spread in u − v
    there is no variance estimate and no evidence (p = 1). None when fewer than two cases are paired
    or a denominator is 0. Run-to-run noise of the scores is not in this test: put it in ``margin``.

    >>> result = ratio_excess_test([0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0])
    >>> round(result.estimate, 3), result.rival, round(result.p_value, 3)
    (0.667, 0.0, 0.029)
    """
    trial_a, trial_b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    full_a, full_b = np.asarray(rival_a, dtype=np.float64), np.asarray(rival_b, dtype=np.float64)
    if trial_a.shape != trial_b.shape or full_a.shape != full_b.shape or trial_a.size > full_a.size:
        raise ValueError("ratio_excess_test: a and b must be aligned, and cover the first cases of rival_a and rival_b")
    rival_scored = np.isfinite(full_a) & np.isfinite(full_b)
    n_total = int(rival_scored.sum())
    if n_total == 0 or full_b[rival_scored].sum() <= 0:
        return None
    rival = float(full_a[rival_scored].sum() / full_b[rival_scored].sum())
    v_all = np.where(rival_scored, (full_a - rival * full_b) / full_b[rival_scored].mean(), 0.0)
    paired = np.isfinite(trial_a) & np.isfinite(trial_b) & rival_scored[: trial_a.size]
    n = int(paired.sum())
    if n < 2 or trial_b[paired].sum() <= 0:
        return None
    sa, sb, v = trial_a[paired], trial_b[paired], v_all[: trial_a.size][paired]
    ratio = float(sa.sum() / sb.sum())
    estimate = ratio - float(v.mean())
    excess = estimate - rival - margin
    if n >= n_total:
        return RatioExcess(ratio, rival, 0.0, n, n_total, 0.0 if ratio - rival > margin else 1.0)
    u = (sa - ratio * sb) / sb.mean()
    spread = float(np.std(u - v, ddof=1))
    if spread == 0:
        return RatioExcess(estimate, rival, 0.0, n, n_total, 1.0)
    from scipy import stats

    se = math.sqrt(1 - n / n_total) * spread / math.sqrt(n)
    return RatioExcess(estimate, rival, se, n, n_total, float(stats.t.sf(excess / se, n - 1)))


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
