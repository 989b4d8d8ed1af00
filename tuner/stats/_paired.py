"""Statistics (metrics → **estimates** → front): the paired comparison of two configurations scored on the same cases:
the one definition ties, front groups, pick rules, notes and the report use."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

CaseScores = Sequence[Sequence[float | None] | NDArray[np.float64]]
"""One configuration's per-case score lists, all in one case order (recall: ``(recall,)``; Δ: ``(f0, f3)``);
None or NaN marks a case it did not score."""

VectorStatistic = Callable[..., NDArray[np.float64]]
"""A statistic of the per-case lists, computed along the last axis (so one call scores every bootstrap resample)."""


def mean_statistic(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """mean over cases: recall@k and every other per-case average."""
    result: NDArray[np.float64] = values.mean(axis=-1)
    return result


def delta_statistic(f0: NDArray[np.float64], fv: NDArray[np.float64]) -> NDArray[np.float64]:
    """Δ = (mean f0 − mean fv) / mean f0 over cases (NaN where mean f0 = 0): Δfaithful and Δcorrect."""
    base, variant = f0.mean(axis=-1), fv.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        result: NDArray[np.float64] = np.where(base > 0, (base - variant) / np.where(base > 0, base, 1.0), np.nan)
    return result


@dataclass(frozen=True)
class PairedComparison:
    """θ(A) − θ(B) on the ``n`` cases both scored, with its standard error and z-interval.

    ``case_sd`` is the paired bootstrap part, ``se`` adds both configurations' run-to-run noise;
    ``margin`` = z · se is the smallest difference that is not noise, ``ci`` = difference ± margin, and
    ``tied`` says the interval covers 0. ``difference`` is NaN (and ``tied`` True) when θ is undefined.
    """

    difference: float
    case_sd: float
    se: float
    z: float
    n: int

    @property
    def margin(self) -> float:
        return self.z * self.se

    @property
    def ci(self) -> tuple[float, float]:
        return (self.difference - self.margin, self.difference + self.margin)

    @property
    def tied(self) -> bool:
        return not math.isfinite(self.difference) or abs(self.difference) <= self.margin + 1e-12


def _matrix(scores: CaseScores, what: str) -> NDArray[np.float64]:
    rows = [[math.nan if v is None else float(v) for v in row] for row in scores]
    if not rows or len({len(row) for row in rows}) != 1:
        raise ValueError(f"{what} needs one or more per-case lists of one length")
    return np.array(rows, dtype=np.float64)


def paired_comparison(
    a: CaseScores,
    b: CaseScores | None,
    statistic: VectorStatistic = mean_statistic,
    run_sd: tuple[float, float] = (0.0, 0.0),
    z: float = 1.96,
    n_resamples: int = 1000,
    seed: int = 0,
) -> PairedComparison:
    """Paired comparison of configuration A with configuration B (or with 0 when ``b`` is None).

    C = the cases both scored (every list of A and of B has a finite value there; ``n`` = |C|). With
    θ = ``statistic`` of a configuration's lists restricted to a set of cases:

        difference = θ(A, C) − θ(B, C)
        case_sd    = sd over b = 1..B of [θ(A, C*_b) − θ(B, C*_b)]     (C*_b: |C| cases of C drawn with
                                                                        replacement, the same for A and B)
        se         = √(case_sd² + run_sd_A² + run_sd_B²)
        interval   = difference ± z · se;   tied  iff  |difference| ≤ z · se

    Resampling cases once for both configurations keeps each case's pair together, so the case-to-case
    spread both share cancels; for Δ the resample recomputes each configuration's Δ = (f̄0 − f̄3) / f̄0 from
    its per-case scores. ``run_sd`` is each configuration's run-to-run standard deviation of θ (from
    regenerating and re-judging, ``NoiseComponent.run_sd``; 0 for deterministic metrics and backends).
    Per-case run noise already shows in the per-case differences, so adding it again errs on the side of
    a tie; correlated run noise (a judge drifting across a whole run) only ``run_sd`` holds. Resamples
    where θ is undefined (mean f0 = 0) are left out. With ``b`` None the comparison is of A with 0: θ(A)
    and its single-configuration noise.

    >>> result = paired_comparison([[1.0, 0.0, 1.0]], [[0.0, 0.0, 1.0]])   # A better on case 0 only
    >>> round(result.difference, 4), result.n
    (0.3333, 3)
    """
    first = _matrix(a, "paired_comparison")
    second = None if b is None else _matrix(b, "paired_comparison")
    if second is not None and second.shape[1] != first.shape[1]:
        raise ValueError(f"paired_comparison: A has {first.shape[1]} cases but B has {second.shape[1]}")
    if min(run_sd) < 0 or z < 0:
        raise ValueError("run_sd and z must be non-negative")
    finite = np.all(np.isfinite(first), axis=0)
    if second is not None:
        finite &= np.all(np.isfinite(second), axis=0)
    both = np.nonzero(finite)[0]
    run_var = run_sd[0] ** 2 + (0.0 if b is None else run_sd[1] ** 2)

    def theta(idx: NDArray[np.int64]) -> NDArray[np.float64]:
        value = statistic(*first[:, idx])
        return value if second is None else value - statistic(*second[:, idx])

    if both.size == 0:
        return PairedComparison(math.nan, math.nan, math.nan, z, 0)
    difference = float(theta(both))
    replicates = theta(both[np.random.default_rng(seed).integers(0, both.size, size=(n_resamples, both.size))])
    replicates = replicates[np.isfinite(replicates)]
    case_sd = float(replicates.std(ddof=1)) if replicates.size > 1 else 0.0
    return PairedComparison(difference, case_sd, math.sqrt(case_sd**2 + run_var), z, int(both.size))
