"""Statistics (metrics → **sequential tests** → pruning): sequential tests for pruning: will a trial end up worse than a
rival by more than a margin, looked at several times."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from tuner.stats._types import FloatValues

SpendingKind = Literal["obf", "pocock", "bonferroni"]


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


def obrien_fleming_spending(alpha: float, t: float) -> float:
    """Lan–DeMets O'Brien–Fleming-type spending: the share of ``alpha`` spent by information fraction t.

        α(t) = 2 − 2Φ(z_{1−α/2} / √t),   α(0) = 0,  α(1) = α

    Almost nothing early (α = 0.05: α(0.2) = 1.2e-5, α(0.5) = 0.0056), so an early look prunes only on
    overwhelming evidence and the late looks keep nearly the whole α.

    >>> round(obrien_fleming_spending(0.05, 0.5), 7)
    0.0055746
    """
    if t <= 0:
        return 0.0
    normal = NormalDist()
    return 2 - 2 * normal.cdf(normal.inv_cdf(1 - alpha / 2) / math.sqrt(t))


def pocock_spending(alpha: float, t: float) -> float:
    """Lan–DeMets Pocock-type spending: the share of ``alpha`` spent by information fraction t.

        α(t) = α · ln(1 + (e − 1) t),   α(0) = 0,  α(1) = α

    Nearly even over equally spaced looks, a little more early (α = 0.05: α(0.2) = 0.0148, α(0.5) = 0.0310),
    so trials that are clearly dominated are stopped soon.

    >>> round(pocock_spending(0.05, 0.5), 6)
    0.031006
    """
    return alpha * math.log(1 + (math.e - 1) * t) if t > 0 else 0.0


def linear_spending(alpha: float, t: float) -> float:
    """Linear spending, α(t) = α · t: at looks equally spaced in information the same α/K at each of K looks
    (Bonferroni), the rule pruning used before looks at fixed fractions.

    >>> linear_spending(0.05, 0.25)
    0.0125
    """
    return alpha * t if t > 0 else 0.0


SPENDING: dict[SpendingKind, Callable[[float, float], float]] = {
    "obf": obrien_fleming_spending,
    "pocock": pocock_spending,
    "bonferroni": linear_spending,
}
"""The α-spending functions by the name a study file gives (``pruning: spending``)."""


@dataclass(frozen=True)
class LookAlpha:
    """One planned look: its information fraction t_j, the α its test uses and the α spent up to it."""

    fraction: float
    alpha: float
    spent: float


def alpha_spending(alpha: float, fractions: Sequence[float], kind: SpendingKind) -> list[LookAlpha]:
    """The α of each look at information fractions 0 < t_1 < … < t_K ≤ 1 (the share of the cases seen).

    The spending function α(·) of ``kind`` (``SPENDING``) is evaluated at the spending time τ_j = t_j / t_K:
    the last interim look is where the whole α is spent, since the complete evaluation (t = 1) is exact and
    needs none of it. Look j tests at α_j = α(τ_j) − α(τ_{j−1}), α(τ_0) = 0. The α_j sum to α, so by the
    union bound the chance of any false rejection over all looks is at most α (conservative: it ignores
    the correlation between looks).

    >>> [round(look.alpha, 6) for look in alpha_spending(0.05, [0.25, 0.5], "obf")]
    [0.005575, 0.044425]
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if kind not in SPENDING:
        raise ValueError(f"unknown alpha spending {kind!r}; expected one of {', '.join(SPENDING)}")
    if not fractions or any(not 0 < t <= 1 for t in fractions) or any(b <= a for a, b in zip(fractions, fractions[1:])):
        raise ValueError(f"look fractions must increase strictly within (0, 1], got {list(fractions)}")
    spend, last = SPENDING[kind], fractions[-1]
    spent = [spend(alpha, t / last) for t in fractions[:-1]] + [alpha]
    return [
        LookAlpha(fraction=t, alpha=now - before, spent=now) for t, before, now in zip(fractions, [0.0, *spent], spent)
    ]
