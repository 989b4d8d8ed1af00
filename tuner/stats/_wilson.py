"""Statistics (metrics → **estimates** → front): Wilson score interval for a proportion, and a proportion reported as n/N
with it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of the proportion p̂ = successes / n.

        centre = (p̂ + z²/2n) / (1 + z²/n)
        half   = z · √(p̂(1 − p̂)/n + z²/4n²) / (1 + z²/n)
        (lo, hi) = (centre − half, centre + half),  z = Φ⁻¹(1 − (1 − confidence)/2)

    Unlike the normal (Wald) interval it stays inside [0, 1] and is not degenerate at 0/n or n/n,
    which is why small golden sets report accuracy with it: 57 of 57 gives a lower bound of
    57 / (57 + z²) ≈ 0.937, not 1. n = 0 raises ``ValueError``: with no trials there is no interval
    to report (the caller reports the case count instead).

    ``successes`` may be fractional: the sum of n per-case scores in [0, 1] (recall@k of a case with two
    relevant documents, the share of a case's keypoints that are faithful). The interval is then that of
    their mean p̂; it stays honest at 0 and 1, where a percentile bootstrap collapses to a point, and it is
    conservative inside: a score in [0, 1] with mean μ has variance at most μ(1 − μ), the variance of a
    0/1 score that the Wilson interval assumes. For 0/1 scores it is the exact Wilson interval.

    >>> [round(x, 4) for x in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
    if n <= 0:
        raise ValueError("wilson_interval needs n ≥ 1 trials")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0/n and n/n the exact bounds are 0 and 1; rounding would otherwise leave ±1e-17.
    lo = 0.0 if successes == 0 else centre - half
    hi = 1.0 if successes == n else centre + half
    return lo, hi


@dataclass(frozen=True)
class Proportion:
    """``successes`` of ``n_total`` cases (conflict exposure: the cases shown a conflicting chunk), with its Wilson
    95% interval, which stays honest at 0/N and N/N. ``value`` and ``ci`` are None when ``n_total`` is 0.

    >>> print(Proportion(0, 57).describe())
    0.000 [0.000, 0.063] (0/57)
    """

    successes: int
    n_total: int

    def __post_init__(self) -> None:
        if not 0 <= self.successes <= self.n_total:
            raise ValueError(f"successes must be between 0 and n_total={self.n_total}, got {self.successes}")

    @classmethod
    def of(cls, flags: Sequence[bool]) -> Proportion:
        """The share of true ``flags``."""
        return cls(sum(1 for flag in flags if flag), len(flags))

    @property
    def value(self) -> float | None:
        return self.successes / self.n_total if self.n_total else None

    @property
    def ci(self) -> tuple[float, float] | None:
        return wilson_interval(self.successes, self.n_total) if self.n_total else None

    def describe(self) -> str:
        """``0.120 [0.083, 0.170] (27/225)``; ``n/a (0/0)`` without cases."""
        if self.value is None or self.ci is None:
            return f"n/a (0/{self.n_total})"
        return f"{self.value:.3f} [{self.ci[0]:.3f}, {self.ci[1]:.3f}] ({self.successes}/{self.n_total})"

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "n", "n_total", "ci"}``: ``n`` counts the successes (n/N), not the cases scored."""
        return {"value": self.value, "n": self.successes, "n_total": self.n_total,
                "ci": None if self.ci is None else list(self.ci)}
