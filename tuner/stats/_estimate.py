"""Statistics (metrics → **estimates** → front): a mean over cases reported with its case count, interval and missing
cases by reason."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np

from tuner.stats._resampling import bootstrap_ci
from tuner.stats._wilson import wilson_interval

CiMethod = Literal["bootstrap", "t", "wilson"]
_CI_METHODS = ("bootstrap", "t", "wilson", None)
DEFAULT_MISSING_REASON = "missing"
G = TypeVar("G", bound=Hashable)


@dataclass(frozen=True)
class Estimate:
    """A mean over N asked cases of which n had a score; the other N − n are counted in ``missing`` by reason.

    ``value`` is None when no case had a score; ``ci`` is None when no interval was asked for or
    fewer than two cases had a score (Wilson needs one).
    """

    value: float | None
    n: int
    n_total: int
    ci: tuple[float, float] | None = None
    missing: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.n + sum(self.missing.values()) != self.n_total:
            raise ValueError(f"n={self.n} plus missing {self.missing} does not add up to n_total={self.n_total}")

    def __str__(self) -> str:
        return f"{self._value_text()} ({self.n}/{self.n_total})"

    def describe(self) -> str:
        """One line for reports: ``0.833 [0.710, 0.920] (9/18; missing: timeout 2, parse failure 1)``."""
        head = self._value_text()
        if self.ci is not None:
            head = f"{head} [{self.ci[0]:.3f}, {self.ci[1]:.3f}]"
        counts = f"{self.n}/{self.n_total}"
        if self.missing:
            counts += "; missing: " + ", ".join(f"{reason} {count}" for reason, count in self.missing.items())
        return f"{head} ({counts})"

    def _value_text(self) -> str:
        return "n/a" if self.value is None else f"{self.value:.3f}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a non-finite value or bound (an undefined ratio) becomes None, which JSON can hold."""
        return {
            "value": finite_or_none(self.value),
            "n": self.n,
            "n_total": self.n_total,
            "ci": None if self.ci is None else [finite_or_none(self.ci[0]), finite_or_none(self.ci[1])],
            "missing": dict(self.missing),
        }


def finite_or_none(value: float | None) -> float | None:
    """``value``, or None where it is None, NaN or infinite (what JSON and the study records can hold)."""
    return value if value is not None and math.isfinite(value) else None


def unscored(estimates: Mapping[str, Estimate]) -> str | None:
    """Why nothing could be scored, when no estimate of ``estimates`` (by name: variants, metrics) has one scored case
    of the cases it asked: every missing score by name and reason; None when one has a score or none asked a case.

    >>> missing = Estimate(None, 0, 8, missing={"malformed_reply": 8})
    >>> unscored({"v0": missing, "v3": missing})
    'every score is missing: v0 malformed_reply 8; v3 malformed_reply 8'
    >>> unscored({"v0": Estimate(1.0, 1, 8, missing={"malformed_reply": 7}), "v3": missing}) is None
    True
    """
    if any(estimate.n > 0 for estimate in estimates.values()) or not any(e.n_total for e in estimates.values()):
        return None
    return "every score is missing: " + "; ".join(
        f"{name} " + ", ".join(f"{reason} {count}" for reason, count in estimate.missing.items())
        for name, estimate in estimates.items() if estimate.missing)


def mean_estimate(
    values: Sequence[float | None],
    reasons: Sequence[str | None] | None = None,
    ci_method: CiMethod | None = "bootstrap",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Mean of the present values, x̄ = Σ x_i / n over the n cases with a score, out of N = len(values).

    A None value is a missing case: it is left out of the mean (never turned into 0) and counted
    under ``reasons[i]`` (default "missing"). A NaN value raises ``ValueError``: a missing score must
    be None with a reason, so nothing shrinks the average silently.

    ``ci_method``: "bootstrap" (percentile bootstrap of the mean, see ``bootstrap_ci``); "t"
    (x̄ ± t_{1−α/2, n−1} · s/√n); "wilson" (Wilson score interval of Σx_i / n, values in [0, 1]: exact
    for 0/1 scores, conservative for fractional ones, and never a point at 0 or 1, see
    ``wilson_interval``: what means of per-case scores in [0, 1] use); None for no interval.

    >>> print(mean_estimate([1.0, 0.5, None], [None, None, "timeout"], ci_method=None).describe())
    0.750 (2/3; missing: timeout 1)
    """
    if ci_method not in _CI_METHODS:
        raise ValueError(f"unknown ci_method {ci_method!r}; expected one of {_CI_METHODS}")
    if reasons is not None and len(reasons) != len(values):
        raise ValueError(f"{len(values)} values but {len(reasons)} reasons")
    present: list[float] = []
    missing: Counter[str] = Counter()
    for i, value in enumerate(values):
        reason = None if reasons is None else reasons[i]
        if value is None:
            missing[reason or DEFAULT_MISSING_REASON] += 1
            continue
        if reason is not None:
            raise ValueError(f"case {i} has a value and a missing reason {reason!r}")
        if math.isnan(value):
            raise ValueError(f"case {i} is NaN; pass None with a missing reason instead")
        present.append(float(value))
    mean = float(np.mean(present)) if present else None
    ci = _interval(present, ci_method, confidence, n_resamples, seed)
    return Estimate(mean, len(present), len(values), ci, dict(sorted(missing.items())))


def _interval(
    present: list[float], method: CiMethod | None, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float] | None:
    if method is None or not present:
        return None
    if method == "wilson":
        if any(not 0.0 <= value <= 1.0 for value in present):
            raise ValueError("the Wilson interval needs values in [0, 1]")
        return wilson_interval(min(math.fsum(present), len(present)), len(present), confidence)
    if len(present) < 2:
        return None
    if method == "bootstrap":
        return bootstrap_ci(present, n_resamples=n_resamples, confidence=confidence, seed=seed)
    from scipy import stats

    mean = float(np.mean(present))
    t_quantile = float(stats.t.ppf(1 - (1 - confidence) / 2, len(present) - 1))
    half = t_quantile * float(np.std(present, ddof=1)) / math.sqrt(len(present))
    return mean - half, mean + half


def by_group(
    values: Sequence[float | None],
    groups: Sequence[G],
    reasons: Sequence[str | None] | None = None,
    ci_method: CiMethod | None = "bootstrap",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[G, Estimate]:
    """One ``mean_estimate`` per group (category, difficulty, ...), keyed by group in sorted order.

    Reported beside the overall mean so that a change concentrated in one category stays visible.
    """
    if len(groups) != len(values):
        raise ValueError(f"{len(values)} values but {len(groups)} group labels")
    if reasons is not None and len(reasons) != len(values):
        raise ValueError(f"{len(values)} values but {len(reasons)} reasons")
    members: dict[G, list[int]] = {}
    for i, group in enumerate(groups):
        members.setdefault(group, []).append(i)
    return {
        group: mean_estimate(
            [values[i] for i in members[group]],
            None if reasons is None else [reasons[i] for i in members[group]],
            ci_method,
            confidence,
            n_resamples,
            seed,
        )
        for group in sorted(members, key=str)
    }
