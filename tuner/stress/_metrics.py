"""Stress (verdicts → **stress metrics** → report): the RAGStress quantities, as pure functions of per-case outcomes.

Notation (docs/stress.md): M a configuration (retrieval settings + generator), t a corruption type,
s a severity, Acc(M, c) the share of cases answered correctly under condition c.

- Δ(M, t, s) = Acc(M, clean) − Acc(M, t, s): positive = accuracy lost to the corruption;
- ρ(M, c) = share of queries for which the retriever returned nothing under c;
- misled(M, c) = #(right under clean ∧ wrong under c) / #(right under clean);
- Γ_t(M₁, M₂) = Δ̄(M₁, t) − Δ̄(M₂, t), Δ̄(M, t) = (1/|S|) Σ_s Δ(M, t, s).

Proportions carry Wilson 95% intervals; Δ, a difference of two proportions measured on the same
cases, carries Newcombe's paired score interval built from the two Wilson intervals; Γ_t carries a
percentile bootstrap interval over cases of its per-case shares (:func:`case_gamma`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tuner.stats import Estimate, mean_estimate, wilson_interval


@dataclass(frozen=True)
class PairedTable:
    """Outcomes of the cases scored under both clean and a condition (paired 2×2 table):
    ``both`` right in both, ``lost`` right under clean and wrong under the condition, ``gained`` the
    reverse, ``neither`` wrong in both."""

    both: int
    lost: int
    gained: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.lost + self.gained + self.neither


def paired_table(clean: Sequence[bool | None], condition: Sequence[bool | None]) -> PairedTable:
    """The 2×2 table of the cases (paired by position) whose outcome is known under both; a None is missing."""
    if len(clean) != len(condition):
        raise ValueError(f"{len(clean)} clean outcomes but {len(condition)} under the condition")
    pairs = [(c, r) for c, r in zip(clean, condition) if c is not None and r is not None]
    return PairedTable(
        both=sum(c and r for c, r in pairs),
        lost=sum(c and not r for c, r in pairs),
        gained=sum(r and not c for c, r in pairs),
        neither=sum(not c and not r for c, r in pairs),
    )


@dataclass(frozen=True)
class Difference:
    """A paired difference of proportions: ``value`` with its interval ``ci`` over ``n`` paired cases
    (both None when no case is paired)."""

    value: float | None
    ci: tuple[float, float] | None
    n: int

    def to_dict(self) -> dict[str, object]:
        return {"value": self.value, "ci": None if self.ci is None else list(self.ci), "n": self.n}


def delta(table: PairedTable, confidence: float = 0.95) -> Difference:
    """Δ = Acc(clean) − Acc(condition) over the n paired cases, with Newcombe's paired score interval.

        p₁ = (both + lost) / n,  p₂ = (both + gained) / n,  Δ = p₁ − p₂ = (lost − gained) / n
        (l₁, u₁) = Wilson(both + lost, n),  (l₂, u₂) = Wilson(both + gained, n)
        φ = (both·neither − lost·gained) / √((both+lost)(gained+neither)(both+gained)(lost+neither)),
            φ = 0 when a margin is 0
        lower = Δ − √((p₁ − l₁)² − 2φ(p₁ − l₁)(u₂ − p₂) + (u₂ − p₂)²)
        upper = Δ + √((u₁ − p₁)² − 2φ(u₁ − p₁)(p₂ − l₂) + (p₂ − l₂)²)

    (Newcombe 1998, "Improved confidence intervals for the difference between binomial proportions
    based on paired data", method 10, φ without continuity correction.) Positive Δ = accuracy lost.

    >>> d = delta(PairedTable(both=6, lost=3, gained=1, neither=2))
    >>> round(d.value, 4), [round(x, 4) for x in d.ci]
    (0.1667, [-0.1378, 0.4325])
    """
    n = table.n
    if n == 0:
        return Difference(None, None, 0)
    right_clean, right_condition = table.both + table.lost, table.both + table.gained
    p1, p2 = right_clean / n, right_condition / n
    l1, u1 = wilson_interval(right_clean, n, confidence)
    l2, u2 = wilson_interval(right_condition, n, confidence)
    margins = right_clean * (table.gained + table.neither) * right_condition * (table.lost + table.neither)
    phi = (table.both * table.neither - table.lost * table.gained) / math.sqrt(margins) if margins else 0.0
    value = p1 - p2
    lower = value - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    upper = value + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return Difference(value, (max(-1.0, lower), min(1.0, upper)), n)


def misled_rate(clean: Sequence[bool | None], condition: Sequence[bool | None], reasons: Sequence[str | None]) -> Estimate:
    """misled = #(right under clean ∧ wrong under the condition) / #(right under clean), Wilson interval.

    The denominator is the cases right under clean; one of them whose outcome under the condition is
    missing is counted in ``missing`` under its ``reasons`` entry, never as misled.

    >>> print(misled_rate([True, True, True, False], [False, True, None, False], [None, None, "timeout", None]).describe())
    0.500 [0.095, 0.905] (2/3; missing: timeout 1)
    """
    right = [i for i, c in enumerate(clean) if c]
    return mean_estimate(
        [None if condition[i] is None else float(not condition[i]) for i in right],
        [reasons[i] for i in right],
        ci_method="wilson",
    )


def empty_rate(retrieved: Sequence[int]) -> Estimate:
    """ρ = #(queries with 0 retrieved chunks) / #queries, Wilson interval.

    >>> print(empty_rate([3, 0, 5, 0]).describe())
    0.500 [0.150, 0.850] (4/4)
    """
    return mean_estimate([float(count == 0) for count in retrieved], ci_method="wilson")


def mean_over_severities(deltas: Mapping[str, float | None]) -> float | None:
    """Δ̄(M, t) = (1/|S|) Σ_s Δ(M, t, s) over the severities s with a value; None when there is none."""
    present = [d for d in deltas.values() if d is not None]
    return sum(present) / len(present) if present else None


def shared_severities(deltas_1: Mapping[str, float | None], deltas_2: Mapping[str, float | None]) -> list[str]:
    """The severities with a Δ under both configurations: those Γ_t averages over."""
    return [s for s in deltas_1 if deltas_1[s] is not None and deltas_2.get(s) is not None]


def gamma(deltas_1: Mapping[str, float | None], deltas_2: Mapping[str, float | None]) -> float | None:
    """Γ_t(M₁, M₂) = Δ̄(M₁, t) − Δ̄(M₂, t), both averaged over the severities with a value under both.

    Positive: type t costs M₁ more accuracy than M₂ (M₂ is the more robust to it).

    >>> round(gamma({"subtle": 0.3, "moderate": 0.1, "obvious": None}, {"subtle": 0.1, "moderate": 0.0, "obvious": 0.5}), 4)
    0.15
    """
    shared = shared_severities(deltas_1, deltas_2)
    one = mean_over_severities({s: deltas_1[s] for s in shared})
    two = mean_over_severities({s: deltas_2[s] for s in shared})
    return None if one is None or two is None else one - two


def case_gamma(
    clean_1: Sequence[bool | None],
    cells_1: Sequence[Sequence[bool | None]],
    clean_2: Sequence[bool | None],
    cells_2: Sequence[Sequence[bool | None]],
) -> list[float | None]:
    """Each case's share of Γ_t, its outcomes (right = 1) paired by position across both configurations:

        g_i = (1/|S|) Σ_{s∈S} [(c₁ᵢ − r₁ᵢₛ) − (c₂ᵢ − r₂ᵢₛ)]

    with c clean and r under severity s (``cells_k[j]`` is severity j of configuration k, the same
    severities on both sides). None when any of case i's 2 + 2|S| outcomes is missing. With none missing,
    (1/n) Σ_i g_i = Γ_t exactly, so a bootstrap of the g_i over cases gives Γ_t its interval.

    >>> case_gamma([True, True], [[False, True]], [True, None], [[True, False]])
    [1.0, None]
    """
    if len(cells_1) != len(cells_2):
        raise ValueError(f"{len(cells_1)} severities against {len(cells_2)}")
    columns = [clean_1, *cells_1, clean_2, *cells_2]
    if len({len(column) for column in columns}) > 1:
        raise ValueError("every condition must hold the same cases")
    severities = len(cells_1)
    shares: list[float | None] = []
    for i in range(len(clean_1)):
        outcomes = [column[i] for column in columns]
        if severities == 0 or any(o is None for o in outcomes):
            shares.append(None)
            continue
        c1, c2 = float(bool(clean_1[i])), float(bool(clean_2[i]))
        shares.append(sum((c1 - float(bool(a[i]))) - (c2 - float(bool(b[i]))) for a, b in zip(cells_1, cells_2)) / severities)
    return shares


def gamma_with_interval(
    deltas_1: Mapping[str, float | None], deltas_2: Mapping[str, float | None], shares: Sequence[float | None], confidence: float = 0.95
) -> Difference:
    """Γ_t (:func:`gamma`) with the percentile bootstrap interval of the mean of the per-case ``shares``
    (:func:`case_gamma`, over the severities Γ_t averages) and n = cases scored under every condition."""
    value = gamma(deltas_1, deltas_2)
    estimate = mean_estimate(shares, ci_method="bootstrap", confidence=confidence)
    if value is None or estimate.n == 0:
        return Difference(value, None, estimate.n)
    return Difference(value, estimate.ci, estimate.n)


Trend = Literal["increasing", "decreasing", "flat", "not monotonic", "n/a"]


def severity_trend(deltas: Sequence[float | None]) -> Trend:
    """How Δ moves along severities in order (subtle → moderate → obvious): "increasing" (never
    down, at least once up), "decreasing", "flat" (all equal), "not monotonic" (up and down), or
    "n/a" with fewer than two values.

    >>> severity_trend([0.1, 0.3, 0.2]), severity_trend([0.1, None, 0.2]), severity_trend([0.2])
    ('not monotonic', 'increasing', 'n/a')
    """
    present = [d for d in deltas if d is not None]
    if len(present) < 2:
        return "n/a"
    steps = [b - a for a, b in zip(present, present[1:])]
    up, down = any(s > 0 for s in steps), any(s < 0 for s in steps)
    if up and down:
        return "not monotonic"
    return "increasing" if up else "decreasing" if down else "flat"
