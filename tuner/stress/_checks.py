"""Stress (stress matrix → **checks** → report): the RAGStress hypotheses stated on one report, and Γ between two
reports (two configurations or two generators over the same dataset)."""

from __future__ import annotations

from dataclasses import dataclass

from tuner.corruption import SEVERITIES
from tuner.stress._evaluate import CLEAN, NO_RETRIEVAL, StressReport
from tuner.stress._metrics import (
    Difference, Trend, case_gamma, gamma, gamma_with_interval, mean_over_severities, severity_trend, shared_severities,
)

ORDER_CLAIMS: tuple[tuple[str, str], ...] = (
    ("factual_corruption", "numeric_typo"),
    ("contradiction_injection", "relevance_poisoning"),
)
"""The paper's ordering of Δ̄ by type: semantic fidelity above signal utility, checked pair by pair."""


@dataclass(frozen=True)
class OrderCheck:
    """Is Δ̄(``higher``) > Δ̄(``lower``)? ``holds`` is None when either type has no value."""

    higher: str
    lower: str
    holds: bool | None


@dataclass(frozen=True)
class BelowNoRetrieval:
    """A condition whose accuracy is below the no-retrieval accuracy; ``disjoint`` when even its Wilson
    upper bound is below the no-retrieval lower bound."""

    condition: str
    accuracy: float
    disjoint: bool


@dataclass(frozen=True)
class Hypotheses:
    """The checks of one report: Δ̄ per type and the claimed ordering, conditions below no retrieval,
    and the trend of Δ over severities per type. Stated as measured, never assumed."""

    type_delta: dict[str, float | None]
    order: tuple[OrderCheck, ...]
    no_retrieval_accuracy: float | None
    below_no_retrieval: tuple[BelowNoRetrieval, ...]
    severity: dict[str, Trend]

    @property
    def observed_order(self) -> list[str]:
        """The types with a Δ̄, largest loss first."""
        present = {k: v for k, v in self.type_delta.items() if v is not None}
        return sorted(present, key=lambda k: -present[k])

    def lines(self) -> list[str]:
        """One sentence per check, for the Markdown and HTML reports."""
        def claim(check: OrderCheck) -> str:
            verdict = {True: "holds", False: "does NOT hold", None: "cannot be checked (a type has no value)"}[check.holds]
            return f"Δ̄ {check.higher} > Δ̄ {check.lower}: {verdict}"

        present = {k: v for k, v in self.type_delta.items() if v is not None}
        order = " > ".join(f"{k} ({present[k] * 100:+.1f} pts)" for k in self.observed_order)
        below = (
            "; ".join(f"{b.condition} {b.accuracy:.1%}" + (" (intervals disjoint)" if b.disjoint else "") for b in self.below_no_retrieval)
            or "none"
        )
        base = "n/a" if self.no_retrieval_accuracy is None else f"{self.no_retrieval_accuracy:.1%}"
        trends = ", ".join(f"{k}: {t}" for k, t in self.severity.items())
        return [
            *(claim(c) for c in self.order),
            f"observed order of Δ̄: {order or 'n/a'}",
            f"conditions below the no-retrieval accuracy ({base}): {below}",
            f"Δ along subtle → moderate → obvious: {trends or 'n/a'}",
        ]

    def to_dict(self) -> dict[str, object]:
        return {
            "type_delta": self.type_delta,
            "order": [{"higher": c.higher, "lower": c.lower, "holds": c.holds} for c in self.order],
            "observed_order": self.observed_order,
            "no_retrieval_accuracy": self.no_retrieval_accuracy,
            "below_no_retrieval": [
                {"condition": b.condition, "accuracy": b.accuracy, "disjoint": b.disjoint} for b in self.below_no_retrieval
            ],
            "severity": self.severity,
        }


def check_hypotheses(report: StressReport) -> Hypotheses:
    """Δ̄(t) = mean of Δ(t, s) over severities; each claim of :data:`ORDER_CLAIMS`; every condition with
    Acc(c) < Acc(no retrieval); the severity trend of Δ per type (:func:`severity_trend`)."""
    deltas = report.deltas()
    type_delta = {kind: mean_over_severities(row) for kind, row in deltas.items()}

    def holds(higher: str, lower: str) -> bool | None:
        a, b = type_delta.get(higher), type_delta.get(lower)
        return None if a is None or b is None else a > b

    base = report.conditions[NO_RETRIEVAL].accuracy
    below: list[BelowNoRetrieval] = []
    if base.value is not None:
        for name, result in report.conditions.items():
            acc = result.accuracy
            if name != NO_RETRIEVAL and acc.value is not None and acc.value < base.value:
                disjoint = acc.ci is not None and base.ci is not None and acc.ci[1] < base.ci[0]
                below.append(BelowNoRetrieval(name, acc.value, disjoint))
    severity = {kind: severity_trend([row.get(s) for s in SEVERITIES]) for kind, row in deltas.items()}
    return Hypotheses(
        type_delta=type_delta,
        order=tuple(OrderCheck(h, lo, holds(h, lo)) for h, lo in ORDER_CLAIMS),
        no_retrieval_accuracy=base.value,
        below_no_retrieval=tuple(below),
        severity=severity,
    )


@dataclass(frozen=True)
class StressComparison:
    """Two reports over the same dataset and conditions; ``gamma`` = Γ_t(first, second) per type, ``gamma_intervals``
    the same values with their bootstrap interval over the cases (:func:`case_gamma`)."""

    first: StressReport
    second: StressReport

    def gamma(self) -> dict[str, float | None]:
        one, two = self.first.deltas(), self.second.deltas()
        return {kind: gamma(one[kind], two.get(kind, {})) for kind in one}

    def gamma_intervals(self) -> dict[str, Difference]:
        ids = [[c.case_id for c in r.conditions[CLEAN].cases] for r in (self.first, self.second)]
        if ids[0] != ids[1]:
            raise ValueError(f"{self.first.label} and {self.second.label} were not scored on the same cases")
        one, two = self.first.deltas(), self.second.deltas()
        cells_1, cells_2 = self.first.matrix(), self.second.matrix()
        clean_1, clean_2 = ([c.correct for c in r.conditions[CLEAN].cases] for r in (self.first, self.second))
        intervals = {}
        for kind in one:
            severities = shared_severities(one[kind], two.get(kind, {}))
            shares = case_gamma(
                clean_1, [[c.correct for c in cells_1[kind][s].cases] for s in severities],
                clean_2, [[c.correct for c in cells_2[kind][s].cases] for s in severities],
            )
            intervals[kind] = gamma_with_interval(one[kind], two.get(kind, {}), shares)
        return intervals

    def to_dict(self) -> dict[str, object]:
        intervals = self.gamma_intervals()  # their values are Γ itself: one pass over the cases serves both keys
        return {
            "first": self.first.label,
            "second": self.second.label,
            "gamma": {kind: diff.value for kind, diff in intervals.items()},
            "gamma_interval": {kind: diff.to_dict() for kind, diff in intervals.items()},
        }
