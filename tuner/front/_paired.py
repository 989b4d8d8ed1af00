"""Front (trial record → **front** → report/export): two trials of a study compared paired, on the cases both scored,
from the per-case scores their records keep (nothing is evaluated again)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tuner.front._record import TrialRecord
from tuner.objectives import EXPOSURE, RECALL, ROBUSTNESS_OBJECTIVES
from tuner.pareto import FrontEntry, PairedMargins
from tuner.stats import CaseScores, PairedComparison, cases_to_separate, delta_statistic, mean_statistic, paired_comparison

Z = 1.96
"""The z of every paired interval and margin (95%, two-sided)."""


def case_scores(record: TrialRecord, objective: str) -> CaseScores | None:
    """The per-case lists ``objective`` is computed from, in the study's case order: recall@k per case, conflict
    exposure per case (0/1), or the scores at v0 and v3 the robustness Δ is the relative drop of; None when the record
    has none (a trial written before they were kept, or context words, which is exact)."""
    if objective == RECALL:
        return None if record.recall_cases is None else (record.recall_cases,)
    if objective == EXPOSURE:
        return None if record.exposed_cases is None else (record.exposed_cases,)
    if objective in ROBUSTNESS_OBJECTIVES and record.f0 is not None and record.f3 is not None:
        return (record.f0, record.f3)
    return None


def _digest(scores: CaseScores) -> bytes:
    """A digest of per-case lists (None read as NaN, as ``paired_comparison`` reads it), length and values: two
    records hold the same scores exactly when their digests are equal."""
    array = np.array(scores, dtype=np.float64)
    return hashlib.blake2b(repr(array.shape).encode() + array.tobytes(), digest_size=16).digest()


def separating_cases(comparison: PairedComparison) -> int | None:
    """The cases at which ``comparison``'s observed difference would separate from 0 (80% power, α 5% two-sided,
    :func:`tuner.stats.cases_to_separate`), with sd_d = √n · se: the per-case sd of the paired differences that the
    comparison's standard error implies, its run-to-run term included. None when the difference is 0 or undefined."""
    if comparison.n == 0 or not math.isfinite(comparison.se):
        return None
    return cases_to_separate(comparison.difference, math.sqrt(comparison.n) * comparison.se)


class PairedComparisons:
    """The paired comparisons of one study's trials, with each configuration's run-to-run sd per objective (the
    study's calibrated one, ``StudyRecord.run_sd``; absent or 0 with deterministic backends).

    The paired bootstrap is seeded, so a comparison depends only on the two trials' per-case scores, the objective and
    the run-to-run sd: this object keeps each one under the scores' digests and the objective, for as long as it lives,
    so a front, the pick notes, the report and the export made from one reading of a study compute each pair once. A
    trial whose scores differ is another key: nothing computed from other scores is returned."""

    def __init__(self, run_sd: Mapping[str, float]) -> None:
        self.run_sd = dict(run_sd)
        self._kept: dict[tuple[bytes, bytes | None, str], PairedComparison] = {}

    def compare(self, a: TrialRecord, b: TrialRecord | None, objective: str) -> PairedComparison | None:
        """``objective`` of trial a minus that of trial b (of 0 when b is None), paired on the cases both scored, with
        both trials' run-to-run sd; None without per-case scores."""
        first = case_scores(a, objective)
        second = None if b is None else case_scores(b, objective)
        if first is None or (b is not None and second is None):
            return None
        key = (_digest(first), None if second is None else _digest(second), objective)
        if key not in self._kept:
            sd = self.run_sd.get(objective, 0.0)
            statistic = mean_statistic if objective in (RECALL, EXPOSURE) else delta_statistic
            self._kept[key] = paired_comparison(first, second, statistic, run_sd=(sd, sd), z=Z)
        return self._kept[key]

    def margins(
        self, records: Mapping[int, TrialRecord], objectives: Sequence[str], floor: Mapping[str, float]
    ) -> PairedMargins:
        """The study's noise floor with, for two trials, the margin z · se of their paired comparison per objective."""

        def pair(a: int, b: int) -> dict[str, float]:
            margins = {}
            for name in objectives:
                comparison = self.compare(records[a], records[b], name)
                if comparison is not None and math.isfinite(comparison.margin):
                    margins[name] = comparison.margin
            return margins

        return PairedMargins(floor, pair)

    def between(self, a: TrialRecord, b: TrialRecord, objectives: Sequence[str]) -> dict[str, PairedComparison]:
        """Per objective in ``objectives``, the paired comparison of a with b (objectives without per-case scores are
        left out)."""
        return {name: c for name in objectives if (c := self.compare(a, b, name)) is not None}

    def neighbours(
        self, entries: Sequence[FrontEntry], records: Mapping[int, TrialRecord], objectives: Sequence[str]
    ) -> list[NeighbourComparison]:
        """Each front member (best recall@k first) against its next neighbour: the paired interval of their
        difference."""
        ordered = sorted(entries, key=lambda e: (-e.values[RECALL], e.number))
        return [
            NeighbourComparison(first.number, second.number,
                                self.between(records[first.number], records[second.number], objectives))
            for first, second in zip(ordered, ordered[1:])
        ]


@dataclass(frozen=True)
class NeighbourComparison:
    """Front member ``trial`` against another, ``other`` (the next one by recall@k, or a pick's runner-up): per
    objective the paired comparison."""

    trial: int
    other: int
    objectives: dict[str, PairedComparison]

    def to_json(self) -> dict[str, object]:
        """Per objective the difference, its 95% interval, n, whether it holds 0, and ``cases_to_separate``
        (:func:`separating_cases`; null when the difference is 0)."""
        return {
            "trial": self.trial,
            "other": self.other,
            **{
                name: {"difference": c.difference, "ci": list(c.ci), "n": c.n, "tied": c.tied,
                       "cases_to_separate": separating_cases(c)}
                for name, c in self.objectives.items()
            },
        }
